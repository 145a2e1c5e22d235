"""One training step as people write it, recorded: forward and loss, backward, the optimizer's step, zero_grad.

The step recorded is the second one: a first, unrecorded step makes what a steady-state step finds already there
(the optimizer's state). zero_grad sets the gradients to None, PyTorch 2's default, on 1.13 too. Between backward
and the optimizer only the loss is kept, as a training loop that drops its outputs (and Hugging Face's Trainer,
whose compute_loss returns the loss alone) keeps it; it is dropped before the optimizer step.

The numerics (--precision), the optimizer (--optimizer) and checkpointing (--checkpointing) are set as a PyTorch user
sets them:
  fp32         nothing;
  mixed-bf16   autocast to bfloat16 around forward and loss, fp32 master weights;
  mixed-fp16   the same with float16 and loss scaling (the loss times the scale, the gradients unscaled and checked
               by GradScaler's own kernels before the step; the scale is kept as a device tensor);
  bf16         model.to(torch.bfloat16): weights, gradients and optimizer state in bfloat16, no autocast.
  sgd-momentum torch.optim.SGD(momentum=0.9); adam torch.optim.Adam; adamw torch.optim.AdamW(weight_decay=0.01);
               all with foreach=True, which is what PyTorch picks on a GPU (on the CPU it would pick the per-tensor
               loop, whose temporaries differ). --weight-decay sets the optimizer's weight_decay instead (SGD's and
               Adam's L2 term: one more foreach pass, out of place, whose result is a list of gradient-sized
               tensors; torchvision's reference recipes train the CNNs with 1e-4).
  none         no checkpointing; hf: Hugging Face's gradient_checkpointing_enable, non-reentrant; blocks:
               torch.utils.checkpoint (non-reentrant) around each block the trace names (step_file.py).
"""
import contextlib
import gc

import torch

from model_specs import SpecError

PRECISIONS = ("fp32", "mixed-fp16", "mixed-bf16", "bf16")
OPTIMIZERS = ("sgd-momentum", "adam", "adamw")
CHECKPOINTING = ("none", "hf", "blocks")


def default_weight_decay(name):
    return 0.01 if name == "adamw" else 0.0


def make_optimizer(name, params, weight_decay=None):
    """`weight_decay` None: the optimizer's own default (AdamW's 0.01, none for SGD and Adam)."""
    wd = default_weight_decay(name) if weight_decay is None else weight_decay
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, weight_decay=wd, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3, weight_decay=wd, foreach=True)
    return torch.optim.AdamW(params, lr=1e-3, weight_decay=wd, foreach=True)


def autocast_dtype(precision):
    return {"mixed-bf16": torch.bfloat16, "mixed-fp16": torch.float16}.get(precision)


def check_precision_supported(precision):
    dtype = autocast_dtype(precision)
    if dtype is None:
        return
    try:
        with torch.autocast("cpu", dtype=dtype):
            pass
    except (RuntimeError, AssertionError) as e:
        raise SpecError(f"--precision {precision}: torch {torch.__version__} has no CPU autocast to {dtype} ({e})")
    if precision == "mixed-fp16" and not hasattr(torch, "_amp_foreach_non_finite_check_and_unscale_"):
        raise SpecError(f"--precision mixed-fp16: torch {torch.__version__} lacks GradScaler's unscale kernel")


def apply_checkpointing(mode, model, block_modules):
    """Turns checkpointing on; returns what the trace records about it."""
    if mode == "none":
        return {"mode": "none"}
    if mode == "hf":
        if not hasattr(model, "gradient_checkpointing_enable"):
            raise SpecError("--checkpointing hf: the model is not a Hugging Face PreTrainedModel")
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        return {"mode": "hf", "use_reentrant": False}
    if not block_modules:
        raise SpecError("--checkpointing blocks: the model has no blocks (repeated modules of its own class in a "
                        "Sequential, ModuleList or ModuleDict) to checkpoint")
    from torch.utils.checkpoint import checkpoint
    for m in block_modules:
        inner = m.forward
        m.forward = lambda *a, _inner=inner, **k: checkpoint(_inner, *a, use_reentrant=False, **k)
    return {"mode": "blocks", "use_reentrant": False, "segments": len(block_modules)}


class LossScale:
    """GradScaler's device-side work without its host check (found_inf.item() reads a value, which fake tensors
    have none of): scale the loss, unscale and check the gradients, update the scale. The step is taken as if no
    gradient overflowed, which is what a steady-state step does."""

    def __init__(self, device):
        self.scale = torch.full((), 65536.0, dtype=torch.float32, device=device)
        self.growth_tracker = torch.zeros((), dtype=torch.int32, device=device)

    def scaled(self, loss):
        return loss * self.scale

    def unscale(self, optimizer):
        found_inf = torch.zeros((), dtype=torch.float32, device=self.scale.device)
        inv_scale = self.scale.double().reciprocal().float()
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
        return found_inf

    def update(self, found_inf):
        torch._amp_update_scale_(self.scale, self.growth_tracker, found_inf, 2.0, 0.5, 2000)


def run_step(workload, optimizer, precision, scaler, recorder=None, after_backward=None):
    """forward + loss, backward, optimizer step, zero_grad; with a recorder, each phase is marked on it.
    after_backward() runs between backward and the optimizer (the tracer names the gradients there)."""
    dtype = autocast_dtype(precision)
    # Autocast on the inputs' device: "cpu" for the tracer's fake tensors, "cuda" when
    # validate/torch/torch_memory_truth.py runs this same step on a GPU.
    device_type = next(iter(workload.inputs.values())).device.type if workload.inputs else "cpu"
    region = torch.autocast(device_type, dtype=dtype) if dtype is not None else contextlib.nullcontext()
    if recorder is not None:
        recorder.phase = "forward"
    with region:
        loss = workload.loss_fn(workload.model, workload.inputs)
    if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
        raise SpecError(f"{workload.name}: the loss is not a scalar tensor ({type(loss).__name__})")
    if scaler is not None:
        loss = scaler.scaled(loss)
    if recorder is not None:
        recorder.phase = "backward"
    loss.backward()
    del loss
    if recorder is not None:
        recorder.phase = "optimizer"
    if after_backward is not None:
        after_backward()
    if scaler is not None:
        found_inf = scaler.unscale(optimizer)
        optimizer.step()
        scaler.update(found_inf)
        del found_inf
    else:
        optimizer.step()
    # set_to_none=True whatever the installed default (PyTorch 2's; 1.13 zeroed the gradients and kept them): the
    # same step recorded with either version, and the steady state most users run.
    optimizer.zero_grad(set_to_none=True)


def warm_up(workload, optimizer, precision, scaler, recorder):
    """The unrecorded first step (the recorder entered but not recording, so that it refuses reads of values as in
    the recorded step): afterwards the optimizer's state exists."""
    run_step(workload, optimizer, precision, scaler, recorder)
    gc.collect()
