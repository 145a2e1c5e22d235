#!/usr/bin/env python3
"""A hardware file's `conv_scratch:` list (hw/conv_scratch.h) from conv_workspace_probe.py's measurements.

  validate/torch/conv_scratch_yaml.py PROBE.json [PROBE.json ...] [--base h200] [--dtypes float32,float16] > FILE.yaml

Each probe record (one convolution shape, pass and dtype: the bytes it asked of PyTorch's caching allocator beyond
its operands and its result, cuDNN's heuristics choosing) becomes one entry keyed by its geometry, so that `dlsim
run` charges it as that convolution's workspace in the zoo's graphs and in recorded steps alike, scaled linearly to
the experiment's batch. Nothing is fitted: the entries are the measurements. With --base the output is a whole
hardware file laid over that one (`base: NAME`); without it, the list alone, to paste into a hardware file.
The probe's shapes carry no dilation (the zoo's CNNs have none): entries say dilation 1. A `conv_bwd` record
(convolution_backward asked for both gradients in one call, as autograd asks it) becomes a `bwd` entry, which dlsim
charges once for the pair of backward ops (hw/conv_scratch.h). Several probe files are merged in the order given: a
later file's record of the same pass, dtype, batch and geometry replaces an earlier one's.

Which bytes: a record with `request_bytes` (the probe since session 12) gives the bytes asked, as PyTorch's
run_conv_plan asks them and as dlsim's pool then rounds them; an older record has only `scratch_bytes`, the
allocator's whole blocks, which may hold up to 1 MiB unsplit beyond the request and the results' blocks' unsplit
tails (conv_workspace_probe.py). A `conv_bwd` record with `requests` (each [bytes, results allocated before it])
becomes the two calls PyTorch makes: a dgrad entry (its largest request after the data gradient) and a wgrad entry
(after the weight gradient), no bwd entry, so that dlsim asks each backward op's own workspace; these replace the
same file's one-gradient records of that batch and geometry, and an earlier file's dgrad, wgrad and bwd records.
"""
import argparse
import json
import sys

DTYPES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16"}
PASSES = {"conv_fwd": "fwd", "conv_dgrad": "dgrad", "conv_wgrad": "wgrad", "conv_bwd": "bwd"}


def pair(v):
    return (v[0], v[1]) if isinstance(v, list) else (v, v)


def record_bytes(r):
    """The bytes a record's call asked beyond its operands and results: the requests where measured, else the
    allocated blocks (older probes)."""
    return int(r["request_bytes"] if "request_bytes" in r else r["scratch_bytes"])


def per_call(records):
    """`records` with each conv_bwd record that has `requests` replaced by its two calls' records, conv_dgrad and
    conv_wgrad (marked `from_bwd`), which also replace that list's own one-gradient records of the same batch and
    geometry (the two-gradient call is the one a training step makes; both ask the same cuDNN plan)."""
    derived = {}
    for r in records:
        if r["op"] != "conv_bwd" or "requests" not in r:
            continue
        for op, results in (("conv_dgrad", 1), ("conv_wgrad", 2)):
            asked = [b for b, before in r["requests"] if before == results]
            d = dict(r, op=op, request_bytes=max(asked, default=0), from_bwd=True)
            del d["requests"]
            derived[(op, r["dtype"], r["layout"], r["n"]) + geometry(r)] = d
    kept = [r for r in records if not (r["op"] == "conv_bwd" and "requests" in r)
            and (r["op"], r["dtype"], r["layout"], r["n"]) + geometry(r) not in derived]
    return kept + list(derived.values())


def entries(records, dtypes):
    """The list's entries (dicts in the loader's key order), sorted for byte-identical output."""
    out, seen = [], set()
    for r in per_call(records):
        if r["dtype"] not in dtypes or r["op"] not in PASSES:
            continue
        (sh, sw), (ph, pw) = pair(r["stride"]), pair(r["pad"])
        e = {"pass": PASSES[r["op"]], "dtype": DTYPES[r["dtype"]], "layout": "nhwc" if r["layout"] != "nchw" else "nchw",
             "n": r["n"], "c": r["c"], "h": r["h"], "w": r["w"], "k": r["k"], "r": r["r"], "s": r["s"],
             "stride_h": sh, "stride_w": sw, "pad_h": ph, "pad_w": pw, "dilation": 1, "groups": r["groups"],
             "bytes": record_bytes(r)}
        key = tuple(v for k, v in e.items() if k != "bytes")
        if key in seen:
            raise SystemExit(f"conv_scratch_yaml: two records for {key}")
        seen.add(key)
        out.append(e)
    return sorted(out, key=lambda e: tuple(str(v) if isinstance(v, str) else f"{v:012d}" for v in e.values()))


def geometry(r):
    """A probe record's convolution without its pass, batch and dtype: (c, h, w, k, r, s, stride, pad, groups)."""
    return (r["c"], r["h"], r["w"], r["k"], r["r"], r["s"], pair(r["stride"]), pair(r["pad"]), r["groups"])


def merge(probes):
    """One probe of several (a later record of the same pass, dtype, batch and geometry replaces an earlier one),
    its meta the last file's with every file's date."""
    if not probes:
        raise SystemExit("conv_scratch_yaml: no probe file")
    by_key = {}
    for p in probes:
        for r in per_call(p["records"]):
            key = (r["dtype"], r["layout"], r["n"]) + geometry(r)
            by_key[(r["op"],) + key] = r
            if r.get("from_bwd"):  # the two calls measured: an earlier file's peak of the pair no longer serves
                by_key.pop(("conv_bwd",) + key, None)
    meta = dict(probes[-1].get("meta", {}))
    meta["date"] = ", ".join(str(p.get("meta", {}).get("date")) for p in probes)
    return {"meta": meta, "records": list(by_key.values())}


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
    ap.add_argument("probe", nargs="+")
    ap.add_argument("--base")
    ap.add_argument("--dtypes", default="float32,float16")
    a = ap.parse_args()
    probes = []
    for path in a.probe:
        try:
            probes.append(json.load(open(path, encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as e:
            print(f"conv_scratch_yaml: {path}: {e}", file=sys.stderr)
            return 2
    probe = probes[0] if len(probes) == 1 else merge(probes)
    bad = [d for d in a.dtypes.split(",") if d not in DTYPES]
    if bad:
        print(f"conv_scratch_yaml: --dtypes: unknown {', '.join(bad)} (known: {', '.join(DTYPES)})", file=sys.stderr)
        return 2
    sys.stdout.write(to_yaml(probe, set(a.dtypes.split(",")), a.base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
