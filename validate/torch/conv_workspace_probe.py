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
and one call made; `scratch_bytes` = the peak of allocated bytes during that call, less what was allocated
before it, less the result's bytes. That is the memory the fake-tensor trace of `dlsim import-torch` cannot see.
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
                    fn = passes[op]
                    fn()
                    torch.cuda.synchronize()
                    before = torch.cuda.memory_allocated()
                    torch.cuda.reset_peak_memory_stats()
                    out = fn()
                    torch.cuda.synchronize()
                    peak = torch.cuda.max_memory_allocated()
                    outs = out if isinstance(out, tuple) else (out,)
                    result = sum(o.numel() * o.element_size() for o in outs)
                    del outs
                    del out
                    records.append({"op": op, "n": n, "c": c, "h": h, "w": w, "k": k, "r": kr, "s": ks,
                                    "stride": stride, "pad": pad, "groups": groups, "dtype": dtype_name,
                                    "layout": "nhwc" if dtype_name == "float16" else "nchw",
                                    "result_bytes": result, "scratch_bytes": max(0, peak - before - result),
                                    "src": r.get("src")})
                del x, wt, y, gy
            except (RuntimeError, torch.cuda.OutOfMemoryError) as e:
                failed.append({"shape": list(key), "dtype": dtype_name, "error": str(e).split("\n")[0][:200]})
            torch.cuda.empty_cache()
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "records": records, "failed": failed}, f, indent=0)
    print(f"conv_workspace_probe: {len(records)} records ({len(failed)} failed) in "
          f"{time.monotonic() - start:.0f} s: {a.out}")
    big = sorted(records, key=lambda r: -r["scratch_bytes"])[:8]
    for r in big:
        print(f"  {r['op']:10} {r['dtype']:8} n{r['n']} c{r['c']} {r['h']}x{r['w']} k{r['k']} {r['r']}x{r['s']} "
              f"s{r['stride'][0]} g{r['groups']}: {r['scratch_bytes'] / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
