#!/usr/bin/env python3
"""A hardware file's `conv_scratch:` list (hw/conv_scratch.h) from conv_workspace_probe.py's measurements.

  validate/torch/conv_scratch_yaml.py PROBE.json [--base h200] [--dtypes float32,float16] > FILE.yaml

Each probe record (one convolution shape, pass and dtype: the bytes it asked of PyTorch's caching allocator beyond
its operands and its result, cuDNN's heuristics choosing) becomes one entry keyed by its geometry, so that `dlsim
run` charges it as that convolution's workspace in the zoo's graphs and in recorded steps alike, scaled linearly to
the experiment's batch. Nothing is fitted: the entries are the measurements. With --base the output is a whole
hardware file laid over that one (`base: NAME`); without it, the list alone, to paste into a hardware file.
The probe's shapes carry no dilation (the zoo's CNNs have none): entries say dilation 1.
"""
import argparse
import json
import sys

DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
PASSES = {"conv_fwd": "fwd", "conv_dgrad": "dgrad", "conv_wgrad": "wgrad"}


def pair(v):
    return (v[0], v[1]) if isinstance(v, list) else (v, v)


def entries(records, dtypes):
    """The list's entries (dicts in the loader's key order), sorted for byte-identical output."""
    out, seen = [], set()
    for r in records:
        if r["dtype"] not in dtypes or r["op"] not in PASSES:
            continue
        (sh, sw), (ph, pw) = pair(r["stride"]), pair(r["pad"])
        e = {"pass": PASSES[r["op"]], "dtype": DTYPES[r["dtype"]], "layout": "nhwc" if r["layout"] != "nchw" else "nchw",
             "n": r["n"], "c": r["c"], "h": r["h"], "w": r["w"], "k": r["k"], "r": r["r"], "s": r["s"],
             "stride_h": sh, "stride_w": sw, "pad_h": ph, "pad_w": pw, "dilation": 1, "groups": r["groups"],
             "bytes": int(r["scratch_bytes"])}
        key = tuple(v for k, v in e.items() if k != "bytes")
        if key in seen:
            raise SystemExit(f"conv_scratch_yaml: two records for {key}")
        seen.add(key)
        out.append(e)
    return sorted(out, key=lambda e: tuple(str(v) if isinstance(v, str) else f"{v:012d}" for v in e.values()))


def to_yaml(probe, dtypes, base=None):
    meta = probe.get("meta", {})
    lines = []
    if base:
        lines += [f"base: {base}",
                  f"description: {base} with cuDNN's scratch per convolution measured through PyTorch's allocator "
                  f"({meta.get('device')}, torch {meta.get('torch')}, cuDNN {meta.get('cudnn')}, "
                  f"benchmark {str(meta.get('benchmark')).lower()})"]
    lines.append("# written by validate/torch/conv_scratch_yaml.py from conv_workspace_probe.py's records "
                 f"of {meta.get('date')}")
    lines.append("conv_scratch:")
    for e in entries(probe["records"], dtypes):
        lines.append("  - {" + ", ".join(f"{k}: {v}" for k, v in e.items()) + "}")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("--base")
    ap.add_argument("--dtypes", default="float32,float16")
    a = ap.parse_args()
    try:
        probe = json.load(open(a.probe, encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        print(f"conv_scratch_yaml: {a.probe}: {e}", file=sys.stderr)
        return 2
    bad = [d for d in a.dtypes.split(",") if d not in DTYPES]
    if bad:
        print(f"conv_scratch_yaml: --dtypes: unknown {', '.join(bad)} (known: {', '.join(DTYPES)})", file=sys.stderr)
        return 2
    sys.stdout.write(to_yaml(probe, set(a.dtypes.split(",")), a.base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
