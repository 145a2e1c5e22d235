#!/usr/bin/env python3
"""Measures the device memory each convolution asks of PyTorch's caching allocator beyond its inputs and its
result: the cuDNN workspace (and any other scratch) of the algorithm cuDNN's heuristics choose, per pass.

  validate/torch/conv_workspace_probe.py --shapes shapes.json --out workspaces.json [--dtypes float32,float16]
      [--passes conv_fwd,conv_dgrad,conv_wgrad,conv_bwd]

--shapes is the file `dlsim fit-kernels --shapes-of MODEL,... --batch B --out FILE` writes (kernel_sweep.py reads
the same). For each convolution shape, pass (forward: F.conv2d; dgrad and wgrad: aten.convolution_backward asked
for one gradient, as kernel_sweep.py times them; conv_bwd: asked for both in one call, as autograd asks it in a
training step) and dtype (float32 NCHW with TF32, float16 channels_last), with
PyTorch's defaults (cudnn.benchmark off): one warm-up call (cuDNN's plan cache), then the allocator's peak is reset
and one call made, under the allocator's memory history. Per record:
- `requests`: every block the call asked for that is not one of its results, in order, each [bytes asked, the
  results allocated before it]: the cuDNN workspaces as run_conv_plan asks them. convolution_backward asked for both
  gradients allocates the data gradient, asks its workspace, then allocates the weight gradient and asks its own,
  so a request after one result is the data gradient's, after two the weight gradient's (conv_scratch_yaml.py
  writes them as the dgrad and wgrad entries dlsim charges per call);
- `request_bytes`: the peak of requested bytes (memory_stats' `requested_bytes`, the sizes asked, unrounded) during
  the call, less those before it and the results' bytes;
- `scratch_bytes`: the same of allocated bytes. Allocated bytes count whole blocks, and the caching allocator does
  not split a block when 1 MiB or less would be left, so this counts the unsplit tail of the workspace's block and of
  the results' blocks too: Inception-v3's Conv2d_2b at batch 32 measured 254 MiB + 806,912 B for its data gradient
  (a whole 254 MiB segment, plus the data gradient's 88,510,464 B result in an 89,317,376 B block) where the step
  asks at most 254 MiB (results/fidelity/memory.md, "Inception-v3 b32: one segment too many"). Kept to compare.
That is the memory the fake-tensor trace of `dlsim import-torch` cannot see.
Records are written as they are measured (a run cut short keeps them); without a GPU it exits 3.
"""
import argparse
import datetime
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_sweep import conv_geometry  # noqa: E402  (the sweep's reading of a shape record)


def call_requests(events, result_addrs):
    """The requests of one call from the memory history's trace events (oldest first): [[bytes asked, how many of
    the call's results were allocated before it], ...] for every alloc that is not a result (`result_addrs`: the
    results' data pointers; a fresh tensor's data pointer is its block's address). A trace alloc's `size` is the
    size asked, before the allocator's rounding."""
    out, results = [], 0
    for e in events:
        if e.get("action") != "alloc":
            continue
        if e.get("addr") in result_addrs:
            results += 1
        else:
            out.append([int(e["size"]), results])
    return out


def measure(torch, fn):
    """One call of `fn` (after its warm-up): (outputs tuple, requests, requested-bytes peak above before, allocated-
    bytes peak above before)."""
    fn()
    torch.cuda.synchronize()
    stats = torch.cuda.memory_stats()
    before_alloc, before_req = stats["allocated_bytes.all.current"], stats["requested_bytes.all.current"]
    torch.cuda.reset_peak_memory_stats()
    # the trace alone (no stacks), cleared so that it holds this call's events only
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=100000,
                                             clear_history=True)
    try:
        out = fn()
        torch.cuda.synchronize()
        snap = torch.cuda.memory._snapshot()
    finally:
        torch.cuda.memory._record_memory_history(enabled=None)
    stats = torch.cuda.memory_stats()
    outs = out if isinstance(out, tuple) else (out,)
    traces = snap.get("device_traces", [])
    dev = torch.cuda.current_device()
    events = traces[dev] if dev < len(traces) else []
    requests = call_requests(events, {o.data_ptr() for o in outs})
    return (outs, requests, stats["requested_bytes.all.peak"] - before_req,
            stats["allocated_bytes.all.peak"] - before_alloc)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtypes", default="float32,float16")
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--passes", default="conv_fwd,conv_dgrad,conv_wgrad",
                    help="comma-separated, of conv_fwd, conv_dgrad, conv_wgrad, conv_bwd (both gradients in one call)")
    a = ap.parse_args()
    wanted = a.passes.split(",")
    unknown = [p for p in wanted if p not in ("conv_fwd", "conv_dgrad", "conv_wgrad", "conv_bwd")]
    if unknown:
        ap.error(f"--passes: unknown pass {', '.join(unknown)}")
    import torch
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        print("conv_workspace_probe: torch sees no GPU; nothing measured", file=sys.stderr)
        return 3
    shapes = [r for r in json.load(open(a.shapes, encoding="utf-8"))["records"] if r.get("op") == "conv_fwd"]
    dev = torch.device("cuda")
    seen, records, failed = set(), [], []
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "argv": sys.argv,
            "device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version(), "benchmark": torch.backends.cudnn.benchmark,
            "allow_tf32_conv": torch.backends.cudnn.allow_tf32}
    start = time.monotonic()
    for r in shapes:
        key = tuple(r.get(k) for k in ("n", "c", "h", "w", "k", "r", "s", "stride", "stride_w", "pad", "pad_w",
                                       "groups"))
        if key in seen:
            continue
        seen.add(key)
        n, c, h, w, k, kr, ks, groups = r["n"], r["c"], r["h"], r["w"], r["k"], r["r"], r["s"], r["groups"]
        stride, pad, dil, _, _ = conv_geometry(r)
        for dtype_name in a.dtypes.split(","):
            if time.monotonic() - start > a.max_seconds:
                break
            dtype = getattr(torch, dtype_name)
            fmt = torch.channels_last if dtype_name == "float16" else torch.contiguous_format
            try:
                x = torch.randn(n, c, h, w, device=dev, dtype=dtype).to(memory_format=fmt)
                wt = torch.randn(k, c // groups, kr, ks, device=dev, dtype=dtype).to(memory_format=fmt)
                y = F.conv2d(x, wt, None, stride, pad, dil, groups)
                gy = torch.randn_like(y)
                passes = {
                    "conv_fwd": lambda: F.conv2d(x, wt, None, stride, pad, dil, groups),
                    "conv_dgrad": lambda: torch.ops.aten.convolution_backward(
                        gy, x, wt, None, stride, pad, dil, False, [0, 0], groups,
                        [True, False, False])[0],
                    "conv_wgrad": lambda: torch.ops.aten.convolution_backward(
                        gy, x, wt, None, stride, pad, dil, False, [0, 0], groups,
                        [False, True, False])[1],
                    "conv_bwd": lambda: torch.ops.aten.convolution_backward(
                        gy, x, wt, None, stride, pad, dil, False, [0, 0], groups,
                        [True, True, False])[:2],
                }
                for op in wanted:
                    outs, requests, req_peak, alloc_peak = measure(torch, passes[op])
                    result = sum(o.numel() * o.element_size() for o in outs)
                    del outs
                    records.append({"op": op, "n": n, "c": c, "h": h, "w": w, "k": k, "r": kr, "s": ks,
                                    "stride": stride, "pad": pad, "groups": groups, "dtype": dtype_name,
                                    "layout": "nhwc" if dtype_name == "float16" else "nchw",
                                    "result_bytes": result, "requests": requests,
                                    "request_bytes": max(0, req_peak - result),
                                    "scratch_bytes": max(0, alloc_peak - result),
                                    "src": r.get("src")})
                del x, wt, y, gy
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                failed.append({"shape": list(key), "dtype": dtype_name, "error": str(e).split("\n")[0][:200]})
            torch.cuda.empty_cache()
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "records": records, "failed": failed}, f, indent=0)
    print(f"conv_workspace_probe: {len(records)} records ({len(failed)} failed) in "
          f"{time.monotonic() - start:.0f} s: {a.out}")
    big = sorted(records, key=lambda r: -r["request_bytes"])[:8]
    for r in big:
        print(f"  {r['op']:10} {r['dtype']:8} n{r['n']} c{r['c']} {r['h']}x{r['w']} k{r['k']} {r['r']}x{r['s']} "
              f"s{r['stride'][0]} g{r['groups']}: asked {r['request_bytes'] / 2**20:.2f} MiB "
              f"(blocks {r['scratch_bytes'] / 2**20:.2f} MiB), requests {[q[0] for q in r['requests']]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
