#!/usr/bin/env python3
"""Which term prices PyTorch's `cat` kernels (CatArrayBatchedCopy) beyond their bytes, on the lent H200's profiler
traces of the four CNNs that concatenate branches or features (results/fidelity/concat-kernels.md quotes this
table):

  /usr/bin/python3 validate/torch/concat_terms.py

Each cat kernel whose op recorded its inputs' shapes (the profiler records none for a list above 30 tensors:
DenseNet-169's six largest a step are left out here) gives t = c0 + c1 * B + c2 * X, B its bytes (inputs read,
output written) over 4.8 TB/s, X one of: the inputs (µs per input), the grid's blocks over the SMs (grid.y rows of
grid.x: every block of the grid), or its idle blocks over the SMs (of each input's row, the blocks past its data:
an input of b bytes keeps ceil(b / 2048) busy, 128 threads of 16 bytes, hw/fitted/concat_kernels.h). Fitted by least
squares on relative errors over one model's cats (or all four), each model's cat time per step predicted (error
against its measured sum). Needs numpy (the CI's Python has it).
"""
import collections
import math
import pathlib
import sys

import numpy

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import membound_kernels as mk  # noqa: E402  (the traces, kernels by aten op)

MODELS = ["densenet121-b32", "densenet169-b32", "googlenet-b32", "inception_v3-b32"]
SMS = 132
TERMS = {"per input": lambda n, gx, busy: n, "all blocks": lambda n, gx, busy: n * gx / SMS,
         "idle blocks": lambda n, gx, busy: (n * gx - busy) / SMS}


def cat_kernels(trace):
    """[(inputs, grid.x, busy blocks, bytes, µs)] of a trace's cat kernels with their inputs' shapes."""
    out = []
    for op, ks in mk.kernels_by_op(trace, {"aten::cat"}):
        dims = op["args"].get("Input Dims")
        for k in ks:
            if "CatArray" not in k["name"] or len(dims[0]) != k["args"]["grid"][1]:
                continue
            sizes = [4 * math.prod(d) for d in dims[0]]
            gx = k["args"]["grid"][0]
            busy = sum(min(gx, math.ceil(s / 2048)) for s in sizes)
            out.append((len(sizes), gx, busy, 2 * sum(sizes), k["dur"]))
    return out


def main():
    main_traces, _ = mk.traces()
    kernels = {m: cat_kernels(main_traces[m][1]) for m in MODELS}
    rows = ["| term | fitted on | c0 µs | c1 (bytes) | c2 | " + " | ".join(m.split("-")[0] for m in MODELS) + " |",
            "|---|---|---:|---:|---:|" + "---:|" * len(MODELS)]
    for name, term in TERMS.items():
        for train in [[MODELS[0]], [MODELS[1]], MODELS]:
            pts = [r for m in train for r in kernels[m]]
            x = numpy.array([[1, r[3] / mk.HBM_BYTES_PER_US, term(*r[:3])] for r in pts])
            y = numpy.array([r[4] for r in pts])
            c, *_ = numpy.linalg.lstsq(x / y[:, None], numpy.ones(len(y)), rcond=None)
            errs = []
            for m in MODELS:
                pred = sum(c @ [1, r[3] / mk.HBM_BYTES_PER_US, term(*r[:3])] for r in kernels[m])
                errs.append(f"{100 * (pred / sum(r[4] for r in kernels[m]) - 1):+.1f} %")
            label = "all four" if len(train) > 1 else train[0].split("-")[0]
            rows.append(f"| {name} | {label} | {c[0]:.2f} | {c[1]:.3f} | {c[2]:.4f} | " + " | ".join(errs) + " |")
    counts = ", ".join(f"{m.split('-')[0]} {len(kernels[m]) // mk.STEPS}" for m in MODELS)
    print("\n".join(rows + ["", f"Cat kernels per step with shapes recorded: {counts}."]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
