#!/usr/bin/python3
"""What PyTorch's non-reentrant activation checkpointing keeps for the backward pass, measured (Debian's
python3-torch 1.13, CPU): the reference for dlsim's `checkpoint` swap policy (policies/swap/checkpoint/checkpoint_swap.h,
policies/swap/core/saved_bytes.h).

Each model runs one training-mode forward pass plus its loss with its blocks wrapped, K consecutive blocks
per segment, in torch.utils.checkpoint.checkpoint(..., use_reentrant=False) (ResNet-50: torchvision's 16
bottleneck blocks across its four stages; BERT-base and GPT-2 small: their 12 layers; stem and head stay
outside), then the backward pass. Two figures, in the accounting of docs/models.md (bytes of distinct storages; parameters,
buffers, the input batch, the labels and BERT's attention mask excluded):
  saved_for_backward_bytes   the storages alive at the end of the forward pass that the backward pass needs:
                             the tensors packed by ops outside every segment, and each segment's inputs
  backward_peak_saved_bytes  the most such storages alive at once during the backward pass, the tensors a
                             segment's recomputation stores included

How they are observed, without changing what PyTorch does:
  - ops outside segments: a saved_tensors_hooks pair around the whole forward whose pack returns a detached
    view of the saved tensor (the view is what the SavedVariable holds, so it dies when autograd releases the
    saved variable after the node ran). Inside a segment, checkpoint's own hooks are innermost and replace
    ours (torch keeps a stack of default hooks and uses the top one).
  - a segment's inputs: the argument tensors handed to checkpoint, which its unpack closure holds.
  - recomputed tensors: checkpoint's inner_pack stores `inner.detach()` for every saved tensor of the segment
    when the backward pass first unpacks one; torch.Tensor.detach is wrapped so that a call from inner_pack
    registers its result.
  Every registered tensor gets a weakref.finalize; a storage counts as alive while one of its registered
  tensors is. The peak is taken after every registration during the backward pass (only recomputation adds).

Usage: validate/torch/torch_checkpoint_bytes.py [--out workloads/testdata/torch_checkpoint.json] [--models resnet50,bert-base,gpt2-small]
"""
import argparse
import importlib.util
import json
import os
import sys

import torch
import torch.nn.functional as F
import torchvision
from torch.utils.checkpoint import checkpoint

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import saved_tensor_tracker as tracker  # noqa: E402


def load_script(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_original_detach = torch.Tensor.detach


def _detach(self):
    r = _original_detach(self)
    if tracker.CURRENT is not None and sys._getframe(1).f_code.co_name == "inner_pack":
        tracker.CURRENT.register(r)
    return r


torch.Tensor.detach = _detach


def segments_of(n, every):
    return [list(range(i, min(i + every, n))) for i in range(0, n, every)]


def run_segment(blocks, *args):
    """Runs blocks in order; a block takes the running tensor (and the extra args, e.g. BERT's mask)."""
    x, rest = args[0], args[1:]
    for b in blocks:
        x = b(x, *rest)
    return x


def checkpointed(blocks, every, x, *rest):
    for seg in segments_of(len(blocks), every):
        mods = [blocks[i] for i in seg]
        tracker.CURRENT.register(x)  # the segment's input, held by checkpoint's unpack closure
        x = checkpoint(lambda *a, mods=mods: run_segment(mods, *a), x, *rest, use_reentrant=False)
    return x


def pack(t):
    d = _original_detach(t)
    tracker.CURRENT.register(d)
    return d


def measure(forward, excluded):
    """forward() -> loss. Returns (saved after forward, peak during backward)."""
    return tracker.measure(forward, excluded, pack)


def resnet50_case(batch, every):
    torch.manual_seed(0)
    m = torchvision.models.resnet50()
    m.train()
    blocks = [b for layer in (m.layer1, m.layer2, m.layer3, m.layer4) for b in layer]
    x = torch.randn(batch, 3, 224, 224)
    y = torch.randint(0, 1000, (batch,))
    excluded = {t.storage().data_ptr() for t in list(m.parameters()) + list(m.buffers()) + [x, y]}

    def forward():
        h = m.maxpool(m.relu(m.bn1(m.conv1(x))))
        h = checkpointed([lambda t, b=b: b(t) for b in blocks], every, h) if every else run_segment(blocks, h)
        h = torch.flatten(m.avgpool(h), 1)
        return F.cross_entropy(m.fc(h), y)

    return measure(forward, excluded)


def bert_case(batch, seq, every):
    tr = load_script("torch_reference_transformers")
    torch.manual_seed(0)
    torch.set_num_threads(1)
    c = tr.BERT_BASE
    m = tr.Bert(c)
    m.train()
    ids = torch.randint(1, c["vocab"], (batch, seq))
    excluded = {t.storage().data_ptr() for t in list(m.parameters()) + list(m.buffers()) + [ids]}

    def forward():
        mask = torch.ones(ids.shape)[:, None, None, :]
        mask = (1.0 - mask) * torch.finfo(torch.float32).min
        excluded.add(mask.storage().data_ptr())  # an input of every layer (dlsim: extended_attention_mask)
        h = m.embeddings(ids)
        layers = list(m.layers)
        h = checkpointed(layers, every, h, mask) if every else run_segment(layers, h, mask)
        torch.tanh(m.pooler(h[:, 0]))  # BertModel's pooler: run, its output unused by the loss
        logits = F.linear(h, m.embeddings.word_embeddings.weight)
        return F.cross_entropy(logits.view(-1, logits.size(-1)), ids.view(-1))

    return measure(forward, excluded)


def gpt2_case(batch, seq, every):
    tr = load_script("torch_reference_transformers")
    torch.manual_seed(0)
    c = tr.GPT2_SMALL
    m = tr.GPT2LM(c)
    m.train()
    ids = torch.randint(1, c["vocab"], (batch, seq))
    excluded = {t.storage().data_ptr() for t in list(m.parameters()) + list(m.buffers()) + [ids]}

    def forward():
        s = ids.size(1)
        h = m.drop(m.wte(ids) + m.wpe(m.position_ids[:, :s]))
        blocks = list(m.h)
        h = checkpointed(blocks, every, h) if every else run_segment(blocks, h)
        logits = F.linear(m.ln_f(h), m.wte.weight)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = ids[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))

    return measure(forward, excluded)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="workloads/testdata/torch_checkpoint.json")
    ap.add_argument("--models", default="resnet50,bert-base,gpt2-small")
    args = ap.parse_args()
    torch.set_num_threads(1)  # a shared build machine; the figures do not depend on threads
    result = {"torch": torch.__version__, "torchvision": torchvision.__version__, "device": "cpu", "runs": []}
    cases = [("resnet50", 4, 0, e) for e in (0, 1, 2)] + [("bert-base", 4, 128, e) for e in (0, 1, 2)] + \
            [("gpt2-small", 2, 256, e) for e in (0, 1, 2)]
    cases = [c for c in cases if c[0] in args.models.split(",")]
    for name, batch, seq, every in cases:
        if name == "resnet50":
            saved, peak = resnet50_case(batch, every)
        elif name == "bert-base":
            saved, peak = bert_case(batch, seq, every)
        else:
            saved, peak = gpt2_case(batch, seq, every)
        run = {"model": name, "batch": batch, "every": every, "saved_for_backward_bytes": saved,
               "backward_peak_saved_bytes": peak}
        if seq:
            run["seq_len"] = seq
        result["runs"].append(run)
        print(json.dumps(run), flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
