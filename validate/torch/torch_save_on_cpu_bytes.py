#!/usr/bin/env python3
"""What PyTorch's torch.autograd.graph.save_on_cpu(pin_memory=True) moves, counted by its own hooks (Debian's
python3-torch 1.13 and python3-torchvision 0.14, CPU), to set beside what dlsim's `save-on-cpu` policy moves.

The context manager's pack_hook and unpack_hook are wrapped so that every call is counted: one pack per
tensor an op saves for backward (a tensor saved by two ops is packed twice), one unpack per saved variable a
backward node reads. Bytes are numel x element size of the tensor handed to the hook; parameters are told apart
by identity with model.parameters(). On the CPU the hooks run exactly as on a GPU (pin_memory is only
requested when CUDA is available); only the copies are trivial.

Usage: validate/torch/torch_save_on_cpu_bytes.py [--models resnet50,vgg16] [--batch 4] [--out FILE.json]
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_reference_cnn import MODELS  # noqa: E402  (the zoo's PyTorch twins)


def measure(build, size, batch):
    torch.manual_seed(0)
    model = build()
    model.train()
    params = {id(p) for p in model.parameters()}
    param_ptrs = {p.data_ptr() for p in model.parameters()}
    counts = {"packs": 0, "pack_bytes": 0, "parameter_packs": 0, "parameter_pack_bytes": 0, "unpacks": 0,
              "unpack_bytes": 0}
    ctx = torch.autograd.graph.save_on_cpu(pin_memory=True)
    pack, unpack = ctx.pack_hook, ctx.unpack_hook

    def counted_pack(t):
        nbytes = t.numel() * t.element_size()
        counts["packs"] += 1
        counts["pack_bytes"] += nbytes
        if id(t) in params or t.data_ptr() in param_ptrs:  # a parameter, or a view of one (linear: weight.t())
            counts["parameter_packs"] += 1
            counts["parameter_pack_bytes"] += nbytes
        return pack(t)

    def counted_unpack(packed):
        t = unpack(packed)
        counts["unpacks"] += 1
        counts["unpack_bytes"] += t.numel() * t.element_size()
        return t

    ctx.pack_hook, ctx.unpack_hook = counted_pack, counted_unpack
    x = torch.randn(batch, 3, size, size)
    y = torch.randint(0, 10, (batch,))
    with ctx:
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet50,vgg16")
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    out = {"torch": torch.__version__, "batch": args.batch, "models": {}}
    for name in args.models.split(","):
        build, size = MODELS[name]
        out["models"][name] = measure(build, size, args.batch)
        print(name, json.dumps(out["models"][name]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
