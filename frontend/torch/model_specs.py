"""What `dlsim import-torch SPEC` traces: SPEC -> a Workload (the model, one batch of inputs, and its loss).

  torchvision:NAME     torchvision.models.NAME, random weights; images (B, 3, S, S), S = --image-size (224; 299
                       for inception_v3), 1000-class labels, cross-entropy. googlenet and inception_v3 are built
                       without their auxiliary heads, as the zoo's are.
  hf:CONFIG.json       a Hugging Face config.json built by the installed transformers with random weights (nothing
                       is downloaded): AutoModelForCausalLM when the config's `architectures` names a *ForCausalLM
                       class (labels = the input ids, Hugging Face's shifted causal-LM loss), else AutoModel with
                       the mean of its last hidden state as the loss. Tokens (B, --seq-len).
  FILE.py:FUNCTION     the user's own: FUNCTION(batch, seq_len) returns (model, inputs, loss_fn): an nn.Module, a
                       dict of named input tensors, and loss_fn(model, inputs) -> a scalar loss tensor.

Everything is built inside the tracer's FakeTensorMode: no parameter holds data, so a model of billions of
parameters builds in seconds and no memory.
"""
import contextlib
import importlib.util
import json
import os
import traceback

import torch
import torch.nn.functional as F

from torch_compat import cast_floating


class SpecError(Exception):
    """A mistake in what the user named (the SPEC, its file, its function, its config): exit 2, one line."""


class Workload:
    def __init__(self, name, model, inputs, loss_fn, info):
        self.name = name  # what the trace calls the model
        self.model = model
        self.inputs = inputs  # {name: tensor}
        self.loss_fn = loss_fn  # loss_fn(model, inputs) -> scalar tensor
        self.info = info  # what the trace records about how it was built


def where_in(exc, path=None):
    """'FILE line N' of the innermost frame of the traceback in `path` (the user's script), else the innermost."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return "?"
    chosen = frames[-1]
    if path is not None:
        real = os.path.realpath(path)
        inside = [f for f in frames if os.path.realpath(f.filename) == real]
        if inside:
            chosen = inside[-1]
    return f"{chosen.filename} line {chosen.lineno}"


@contextlib.contextmanager
def _real_block_params(models):
    """RegNet's constructor computes its stage widths with tensor arithmetic and reads them back (`.tolist()` in
    torchvision's BlockParams.from_init_params), which a fake tensor cannot answer: that arithmetic (on a few
    integers, no weights) runs outside the fake mode; the model's layers are still built fake."""
    params = getattr(getattr(models, "regnet", None), "BlockParams", None)
    try:
        from torch._subclasses.fake_tensor import unset_fake_temporarily
    except ImportError:  # PyTorch before 2.1: RegNet fails with the tracer's data-dependence error, as it did
        params = None
    if params is None:
        yield
        return
    original = params.__dict__["from_init_params"]

    def real(cls, *args, **kwargs):
        with unset_fake_temporarily():
            return original.__func__(cls, *args, **kwargs)

    params.from_init_params = classmethod(real)
    try:
        yield
    finally:
        params.from_init_params = original


def _torchvision(name, batch, image_size):
    try:
        import torchvision
    except ImportError:
        raise ModuleNotFoundError("torchvision is not installed (Debian: apt-get install python3-torchvision; "
                                  "scripts/install-deps.sh installs it)", name="torchvision") from None
    models = torchvision.models
    if hasattr(models, "list_models"):
        known = sorted(models.list_models(module=models))
    else:  # pragma: no cover - torchvision before 0.14
        known = sorted(n for n in dir(models) if n.islower() and not n.startswith("_") and callable(getattr(models, n)))
    if name not in known:
        raise SpecError(f"torchvision:{name}: torchvision {torchvision.__version__} has no classification model "
                        f"'{name}'; it has: {', '.join(known)}")
    kwargs = {}
    if name in ("googlenet", "inception_v3"):
        kwargs = {"aux_logits": False, "init_weights": False}  # as the zoo builds them
    with _real_block_params(models):
        model = getattr(models, name)(**kwargs)
    side = image_size or (299 if name == "inception_v3" else 224)
    inputs = {"images": torch.empty(batch, 3, side, side), "labels": torch.zeros(batch, dtype=torch.long)}

    def loss_fn(m, x):
        return F.cross_entropy(m(x["images"]), x["labels"])

    return Workload(name, model, inputs, loss_fn, {"image_size": side, "loss": "cross_entropy"})


def _read_config(path):
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise SpecError(f"hf:{path}: {e.strerror}") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as e:
        raise SpecError(f"hf:{path} line {e.lineno}: not JSON: {e.msg}") from None
    if not isinstance(config, dict):
        raise SpecError(f"hf:{path}: a config.json holds an object, not {type(config).__name__}")
    if not isinstance(config.get("model_type"), str):
        raise SpecError(f"hf:{path}: field 'model_type' is missing or not a string")
    return config


def is_causal_lm(architectures, causal_lm_class):
    """Whether a config's `architectures` name a causal language model: a name ending in ForCausalLM, or the class
    transformers' AutoModelForCausalLM builds for the config's model_type (`causal_lm_class`, None where it has none).
    The second is how the older models are named: GPT-2's config says GPT2LMHeadModel, and without it GPT-2 was
    built as GPT2Model, trained on the mean of its last hidden state, with no LM head and no loss over the
    vocabulary."""
    names = [a for a in architectures if isinstance(a, str)]
    return any(a.endswith("ForCausalLM") for a in names) or (causal_lm_class is not None and causal_lm_class in names)


def _causal_lm_class(model_type):
    """The class name AutoModelForCausalLM builds for `model_type` in the installed transformers, or None."""
    try:
        from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    except ImportError:
        return None
    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type)
    return name if isinstance(name, str) else None


def _huggingface(path, batch, seq_len):
    config_dict = _read_config(path)
    try:
        import transformers
    except ImportError:
        raise ModuleNotFoundError("transformers is not installed (it is on PyPI only: pip install transformers, in a "
                                  "virtual environment whose python DLSIM_PYTHON or --python names)",
                                  name="transformers") from None
    model_type = config_dict["model_type"]
    try:
        config = transformers.AutoConfig.for_model(model_type, **{k: v for k, v in config_dict.items()
                                                                  if k != "model_type"})
    except (ValueError, KeyError) as e:
        raise SpecError(f"hf:{path}: field 'model_type': transformers {transformers.__version__} does not know "
                        f"'{model_type}' ({e})") from None
    archs = config_dict.get("architectures") or []
    causal = is_causal_lm(archs, _causal_lm_class(model_type))
    auto = transformers.AutoModelForCausalLM if causal else transformers.AutoModel
    try:
        model = auto.from_config(config)
    except ValueError as e:
        raise SpecError(f"hf:{path}: transformers {transformers.__version__} cannot build {auto.__name__} from it: "
                        f"{e}") from None
    # A config's torch_dtype is how its checkpoint is stored; training keeps fp32 master weights (--precision bf16
    # casts the model afterwards, as model.to(torch.bfloat16) does).
    cast_floating(model, torch.float32)
    if not seq_len:
        raise SpecError(f"hf:{path}: a token model needs --seq-len")
    limit = getattr(config, "max_position_embeddings", None)
    if isinstance(limit, int) and seq_len > limit:
        raise SpecError(f"hf:{path}: --seq-len {seq_len} is above the config's max_position_embeddings {limit}")
    vocab = int(getattr(config, "vocab_size", 2))
    inputs = {"input_ids": torch.zeros(batch, seq_len, dtype=torch.long)}

    def causal_loss(m, x):
        return m(input_ids=x["input_ids"], labels=x["input_ids"], use_cache=False).loss

    def hidden_loss(m, x):
        return m(input_ids=x["input_ids"]).last_hidden_state.float().mean()

    name = config_dict.get("_name_or_path") or (archs[0] if archs else model_type)
    info = {"config": os.path.basename(path), "model_type": model_type, "vocab_size": vocab,
            "architecture": type(model).__name__, "loss": "causal_lm" if causal else "mean_last_hidden_state",
            "attn_implementation": getattr(config, "_attn_implementation", None)}
    return Workload(name, model, inputs, causal_loss if causal else hidden_loss, info)


def _script(path, function, batch, seq_len):
    if not os.path.isfile(path):
        raise SpecError(f"{path}: no such file (SPEC FILE.py:FUNCTION)")
    spec = importlib.util.spec_from_file_location("dlsim_user_step", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise SpecError(f"{where_in(e, path)}: importing the script raised {type(e).__name__}: {e}") from None
    fn = getattr(module, function, None)
    if not callable(fn):
        raise SpecError(f"{path}: has no function '{function}'")
    try:
        built = fn(batch, seq_len)
    except Exception as e:
        raise SpecError(f"{where_in(e, path)}: {function}({batch}, {seq_len}) raised {type(e).__name__}: {e}") from None
    if not (isinstance(built, tuple) and len(built) == 3):
        raise SpecError(f"{path}: {function} must return (model, inputs, loss_fn), not {type(built).__name__}")
    model, inputs, loss_fn = built
    if not isinstance(model, torch.nn.Module):
        raise SpecError(f"{path}: {function}'s model is a {type(model).__name__}, not a torch.nn.Module")
    if not isinstance(inputs, dict) or not all(isinstance(v, torch.Tensor) for v in inputs.values()):
        raise SpecError(f"{path}: {function}'s inputs must be a dict of named tensors")
    if not callable(loss_fn):
        raise SpecError(f"{path}: {function}'s loss_fn is not callable")
    return Workload(f"{os.path.basename(path)}:{function}", model, inputs, loss_fn,
                    {"script": os.path.basename(path), "function": function, "loss": "loss_fn"})


def build_workload(spec, batch, seq_len, image_size):
    """SPEC -> Workload, inside the caller's fake mode. Bad SPECs raise SpecError naming what is wrong."""
    if spec.startswith("torchvision:"):
        if seq_len:
            raise SpecError(f"{spec}: an image model: --seq-len means nothing to it")
        return _torchvision(spec[len("torchvision:"):], batch, image_size)
    if spec.startswith("hf:"):
        if image_size:
            raise SpecError(f"{spec}: a token model: --image-size means nothing to it")
        return _huggingface(spec[len("hf:"):], batch, seq_len)
    path, sep, function = spec.rpartition(":")
    if sep and path.endswith(".py") and function:
        return _script(path, function, batch, seq_len)
    raise SpecError(f"SPEC '{spec}' names nothing: expected torchvision:NAME, hf:CONFIG.json or FILE.py:FUNCTION")
