#!/usr/bin/env python3
"""ViT-B/16's fp32 attention kernels as fit records (issue 28): the one fp32 attention shape any lease measured,
written as a sweep file `dlsim fit-kernels` reads beside the sweeps (ship_hw_files.py's SWEEPS, step_fidelity.py's
MODEL_SWEEPS), so that the kernel model has classes for PyTorch's memory-efficient fp32 kernels (sdpa_fwd.tf32,
sdpa_bwd.tf32: hw/fitted/op_kernel_shapes.h, sdpa_path).

  validate/torch/vit_sdpa_records.py [--check]

Reads the profiler trace of ViT-B/16's two eager steps (results/fidelity/data/h200-2026-11-28c/traces-vit.tar,
torch_step_profile.py: batch 32, 12 heads, 197 tokens, head size 64, no mask) and writes OUT: per layer and step, an
`sdpa_fwd` record of the forward kernel's time (fmha_cutlassF_f32_*) and an `sdpa_fwd_bwd` record of the forward's
and backward's (fmha_cutlassB_f32_*) together, as a sweep times its forward+backward (fit_samples.cc takes the
forward off again). The times are CUPTI's kernel durations, the device alone (timing_mode trace); the replays' idle
time between kernels (about 1 µs, 0.2-0.5 % of these) is not added. src `model:vit_b_16`, so that a fit leaving ViT
out drops them (step_fidelity.without_model). Deterministic: --check compares OUT with what it would write.
"""
import argparse
import gzip
import json
import pathlib
import sys
import tarfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-28c"
TAR, MEMBER = DATA / "traces-vit.tar", "traces/vit_b_16-b32.json.gz"
OUT = DATA / "kernels-vit-sdpa.json"
# The step's attention shape: torchvision's vit_b_16 at batch 32 (224 px / 16 = 14 x 14 patches and the class
# token), nn.MultiheadAttention's 12 heads of 768 / 12.
SHAPE = {"b": 32, "heads": 12, "seq": 197, "d": 64, "causal": False}
FORWARD, BACKWARD = "fmha_cutlassF_f32", "fmha_cutlassB_f32"


def kernels(events, prefix):
    """The durations (µs) of the trace's kernels whose name starts with `prefix`, in launch order."""
    ks = sorted((e for e in events if e.get("cat") == "kernel" and e["name"].startswith(prefix)),
                key=lambda e: e["ts"])
    return [e["dur"] for e in ks], sorted({e["name"].split("(")[0] for e in ks})


def records(events):
    fwd, fwd_names = kernels(events, FORWARD)
    bwd, bwd_names = kernels(events, BACKWARD)
    if not fwd or len(fwd) != len(bwd):
        raise SystemExit(f"vit_sdpa_records: {TAR}:{MEMBER}: {len(fwd)} forward and {len(bwd)} backward "
                         "memory-efficient fp32 attention kernels; expected as many of each")
    flops = 4.0 * SHAPE["b"] * SHAPE["heads"] * SHAPE["seq"] ** 2 * SHAPE["d"]  # QK^T and PV (kernel_sweep.py's)
    out = []
    # The i-th forward pairs with the i-th backward (the backward runs the layers in reverse; every layer has the
    # same shape, and fit-kernels pairs the i-th sdpa_fwd_bwd of a shape with its i-th sdpa_fwd).
    for f in fwd:
        out.append(dict(op="sdpa_fwd", **SHAPE, dtype="float32", flops=flops, us=round(f, 3), src="model:vit_b_16"))
    for f, b in zip(fwd, bwd):
        out.append(dict(op="sdpa_fwd_bwd", **SHAPE, dtype="float32", flops=3.5 * flops, us=round(f + b, 3),
                        src="model:vit_b_16"))
    return out, fwd_names + bwd_names


def document():
    with tarfile.open(TAR) as t:
        events = json.loads(gzip.decompress(t.extractfile(MEMBER).read()))["traceEvents"]
    recs, names = records(events)
    meta = {"device": "NVIDIA H200", "torch": "2.11.0+cu130", "cudnn": 91900, "cuda": "13.0",
            "timing_mode": "trace",
            "timing": "device time: CUPTI's duration of each kernel in the profiler trace of two eager training "
                      "steps (torch.profiler), no idle time between kernels",
            "source": f"{TAR.relative_to(ROOT)}:{MEMBER}, written by validate/torch/vit_sdpa_records.py",
            "kernels": names, "records": len(recs)}
    return json.dumps({"meta": meta, "records": recs}, indent=1) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare the committed file, write nothing")
    a = ap.parse_args()
    text = document()
    if a.check:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"vit_sdpa_records: {OUT.relative_to(ROOT)} is not what the trace gives; rerun without --check",
                  file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
