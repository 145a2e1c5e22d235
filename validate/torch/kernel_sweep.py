#!/usr/bin/env python3
"""Measures single-kernel times on a GPU through PyTorch, for `dlsim fit-kernels` (a hardware file's kernel_model).

Writes the sweep format of shared/data/gpu/*/kernels.json (validate/calibrate/kernel_fit/kernel_sweep.h): one record
per kernel, `us` the median and `us_min` the least of --reps timings after --warmups, and a meta block with the
device and the library versions. What it measures, as PyTorch runs it with its defaults (cudnn.benchmark off, so
cuDNN's heuristics choose; TF32 on for convolutions, off for matmuls unless the record says tf32):
  - every convolution shape of --shapes (`dlsim fit-kernels --shapes-of MODEL,... --out FILE` lists the zoo's
    layers) and --random seeded draws, each as forward (F.conv2d), backward-data and backward-filter
    (aten.convolution_backward asked for one gradient), in float32 NCHW and float16 channels_last; a depthwise
    shape also in float32 channels_last, which PyTorch runs in cuDNN's depthwise kernels where it runs float32 NCHW
    in its own (hw/fitted/conv_backend.h: two classes of their own);
  - every GEMM (a @ b) and batched GEMM (torch.bmm) shape, in fp32, tf32 and bf16;
  - causal scaled dot-product attention (PyTorch's flash kernel), forward and forward + backward, in bf16;
  - add, relu, copy, softmax and layer norm (rows of 1,024) and training-mode batch norm (N x C x 56 x 56) at
    sizes from 2^16 to 2^26 elements, in float32 and bfloat16.
The work is dealt round-robin over those kinds, so a sweep cut short by --max-seconds still covers each of them.

Timing (--timing): `events` (the default, as kernels.json was measured) records a CUDA event pair around one call:
for a kernel shorter than PyTorch's own per-op host path the pair also holds the gap while the host dispatched it.
`graph` captures --graph-repeat calls in a CUDA graph and times its replay: the device time alone.

Usage (on the GPU machine):
  dlsim fit-kernels --shapes-of resnet50,mobilenet_v2,googlenet,resnet18 --batch 8,32 --out shapes.json
  validate/torch/kernel_sweep.py --shapes shapes.json --random 200 --max-seconds 1800 --out kernels.json
  dlsim fit-kernels kernels.json --hw configs/hw/<gpu>.yaml --out configs/hw/<gpu>-pytorch.yaml --report fit.md
Without a GPU, `--device cpu --dry-run` runs every record once on the CPU (what the CPU build of PyTorch supports;
the rest is listed in meta.skipped) to check the tool and the file it writes, not to measure anything.
"""
import argparse
import json
import math
import platform
import random
import statistics
import sys
import time

MEMORY_OPS = ["add", "relu", "copy", "softmax", "layernorm", "batchnorm_fwd"]
CONV_PASSES = ["conv_fwd", "conv_dgrad", "conv_wgrad"]
CONV_TYPES = [("float32", "nchw"), ("float16", "nhwc")]
DEPTHWISE_TYPES = CONV_TYPES + [("float32", "nhwc")]
GEMM_TYPES = ["fp32", "tf32", "bf16"]
CHANNELS = [3, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
SIDES = [7, 14, 17, 28, 35, 56, 112, 224]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True, help="the sweep file to write")
    p.add_argument("--shapes", help="kernel shapes to measure (dlsim fit-kernels --shapes-of ... --out FILE)")
    p.add_argument("--random", type=int, default=200, help="seeded random convolution shapes (default 200)")
    p.add_argument("--random-gemms", type=int, default=100, help="seeded random GEMM shapes (default 100)")
    p.add_argument("--random-sdpa", type=int, default=20, help="seeded random attention shapes (default 20)")
    p.add_argument("--sdpa-fp32", action="store_true",
                   help="time each attention shape in fp32 too (PyTorch's memory-efficient kernels: the kernel "
                        "model's sdpa_*.tf32 classes) beside bf16 (flash)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--warmups", type=int, default=2)
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--max-seconds", type=float, default=1800.0, help="stop measuring after this long (default 1800)")
    p.add_argument("--timing", choices=["events", "graph"], default="events")
    p.add_argument("--graph-repeat", type=int, default=20, help="calls per captured graph with --timing graph")
    p.add_argument("--max-tensor-gib", type=float, default=8.0, help="skip a shape whose tensors need more")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (with --dry-run)")
    p.add_argument("--dry-run", action="store_true",
                   help="one warm-up and one timing per record, small memory-bound sizes: checks the tool and its file")
    a = p.parse_args(argv)
    if a.device not in ("cuda", "cpu"):
        p.error("--device must be cuda or cpu")
    if a.device == "cpu" and not a.dry_run:
        p.error("--device cpu measures nothing a GPU's file could use: give --dry-run")
    if a.warmups < 0 or a.reps < 1 or a.max_seconds <= 0 or a.graph_repeat < 1:
        p.error("--warmups >= 0, --reps >= 1, --max-seconds > 0 and --graph-repeat >= 1")
    if a.dry_run:
        a.warmups, a.reps = 1, 1
    return a


def conv_geometry(s):
    """(stride, padding, dilation) pairs and the output's height and width of a convolution record."""
    stride = [s["stride"], s.get("stride_w", s["stride"])]
    pad = [s["pad"], s.get("pad_w", s["pad"])]
    dil = s.get("dilation", 1)
    ho = (s["h"] + 2 * pad[0] - dil * (s["r"] - 1) - 1) // stride[0] + 1
    wo = (s["w"] + 2 * pad[1] - dil * (s["s"] - 1) - 1) // stride[1] + 1
    return stride, pad, [dil, dil], ho, wo


def conv_flops(s):
    _, _, _, ho, wo = conv_geometry(s)
    return 2.0 * s["n"] * s["k"] * ho * wo * (s["c"] // s["groups"]) * s["r"] * s["s"]


# The random draws; `small` (a dry run on the CPU) keeps them to sizes a CPU runs in milliseconds.
def random_conv(rng, small):
    c = rng.choice(CHANNELS[:6] if small else CHANNELS)
    depthwise = c > 3 and rng.random() < 0.1
    r = rng.choice([1, 1, 3, 3, 5, 7])
    h = rng.choice(SIDES[:3] if small else SIDES)
    stride = rng.choice([1, 1, 2])
    k = c if depthwise else rng.choice(CHANNELS[:6] if small else CHANNELS)
    return {"n": rng.choice([1, 2] if small else [1, 8, 16, 32, 64, 128]), "c": c, "h": h, "w": h, "k": k, "r": r,
            "s": r, "stride": stride, "pad": r // 2, "groups": c if depthwise else 1, "src": "random"}


def random_gemm(rng, small):
    top = 512 if small else 24576

    def dim():
        return max(8, int(round(math.exp(rng.uniform(math.log(64), math.log(top))) / 8)) * 8)
    return {"m": dim(), "n": dim(), "k": dim(), "src": "random"}


def random_sdpa(rng, small):
    return {"b": rng.choice([1, 2] if small else [1, 2, 4, 8]), "heads": rng.choice([8, 12, 14, 16, 32]),
            "seq": rng.choice([64, 128] if small else [256, 512, 1024, 2048, 4096, 8192]), "d": rng.choice([64, 128]),
            "causal": True, "src": "random"}


def load_shapes(path):
    """Convolution, GEMM and attention shapes from a dlsim shapes file (its records, without times)."""
    with open(path) as f:
        doc = json.load(f)
    convs, gemms, sdpas = [], [], []
    for r in doc.get("records", []):
        keep = {k: v for k, v in r.items() if k not in ("op", "dtype", "layout", "tf32", "us", "us_min", "flops")}
        if r["op"] in CONV_PASSES:
            convs.append(keep)
        elif r["op"] in ("gemm", "bmm"):
            gemms.append(keep)
        elif r["op"] in ("sdpa_fwd", "sdpa_fwd_bwd"):
            sdpas.append(keep)
    return convs, gemms, sdpas


def work_list(a):
    """The records to measure, dealt round-robin over the kinds so that a cut-short sweep still has each."""
    rng = random.Random(a.seed)
    convs, gemms, sdpas = load_shapes(a.shapes) if a.shapes else ([], [], [])
    convs += [random_conv(rng, a.dry_run) for _ in range(a.random)]
    gemms += [random_gemm(rng, a.dry_run) for _ in range(a.random_gemms)]
    sdpas += [random_sdpa(rng, a.dry_run) for _ in range(a.random_sdpa)]
    queues = {}
    for s in convs:
        depthwise = s["groups"] > 1 and s["groups"] == s["c"]
        for dtype, layout in DEPTHWISE_TYPES if depthwise else CONV_TYPES:
            for op in CONV_PASSES:
                queues.setdefault((op, dtype), []).append(dict(s, op=op, dtype=dtype, layout=layout))
    for s in gemms:
        for dtype in GEMM_TYPES:
            op = "bmm" if s.get("batch", 1) > 1 else "gemm"
            rec = dict(s, op=op, dtype=dtype)
            if op == "gemm":
                rec.pop("batch", None)
            queues.setdefault((op, dtype), []).append(rec)
    for s in sdpas:
        for op in ("sdpa_fwd", "sdpa_fwd_bwd"):
            for dtype in ("bfloat16", "float32") if a.sdpa_fp32 else ("bfloat16",):
                queues.setdefault((op, dtype), []).append(dict(s, op=op, dtype=dtype))
    top = 22 if a.dry_run else 26
    for exp in range(16, top + 1, 2):
        for op in MEMORY_OPS:
            for dtype in ("float32", "bfloat16"):
                if op == "batchnorm_fwd":
                    c = 64 if exp <= 20 else 256
                    n = max(1, (1 << exp) // (c * 56 * 56))
                    rec = {"op": op, "numel": n * c * 56 * 56, "c": c, "dtype": dtype}
                else:
                    rec = {"op": op, "numel": 1 << exp, "dtype": dtype}
                queues.setdefault((op, dtype), []).append(rec)
    order, keys = [], sorted(queues)
    while any(queues[k] for k in keys):
        for k in keys:
            if queues[k]:
                order.append(queues[k].pop(0))
    return order


class Runner:
    """Builds each record's inputs and times its call."""

    def __init__(self, a):
        import torch
        self.torch, self.a = torch, a
        self.dev = torch.device(a.device)
        torch.backends.cudnn.benchmark = False
        torch.backends.cudnn.allow_tf32 = True

    def dtype(self, name):
        t = self.torch
        return {"float32": t.float32, "fp32": t.float32, "tf32": t.float32, "float16": t.float16, "fp16": t.float16,
                "bfloat16": t.bfloat16, "bf16": t.bfloat16}[name]

    def rand(self, shape, dtype, channels_last=False, grad=False):
        x = self.torch.randn(*shape, device=self.dev, dtype=dtype)
        if channels_last:
            x = x.contiguous(memory_format=self.torch.channels_last)
        return x.requires_grad_(grad)

    def call(self, r):
        """The record's call (a function of no arguments), and the bytes its tensors take."""
        t, op = self.torch, r["op"]
        F = t.nn.functional
        dt = self.dtype(r["dtype"])
        t.backends.cuda.matmul.allow_tf32 = r["dtype"] == "tf32"
        es = t.tensor([], dtype=dt).element_size()
        if op in CONV_PASSES:
            cl = r.get("layout") == "nhwc"
            stride, pad, dil, ho, wo = conv_geometry(r)
            x = self.rand((r["n"], r["c"], r["h"], r["w"]), dt, cl)
            w = self.rand((r["k"], r["c"] // r["groups"], r["r"], r["s"]), dt, cl)
            gy = self.rand((r["n"], r["k"], ho, wo), dt, cl)
            size = (x.numel() + w.numel() + gy.numel()) * es
            g = r["groups"]
            if op == "conv_fwd":
                return (lambda: F.conv2d(x, w, None, stride, pad, dil, g)), size
            mask = [op == "conv_dgrad", op == "conv_wgrad", False]
            return (lambda: t.ops.aten.convolution_backward(gy, x, w, None, stride, pad, dil, False, [0, 0], g,
                                                             mask)), size
        if op in ("gemm", "bmm"):
            b = r.get("batch", 1)
            lead = (b,) if op == "bmm" else ()
            x, y = self.rand(lead + (r["m"], r["k"]), dt), self.rand(lead + (r["k"], r["n"]), dt)
            size = (x.numel() + y.numel() + b * r["m"] * r["n"]) * es
            return ((lambda: t.bmm(x, y)) if op == "bmm" else (lambda: x @ y)), size
        if op in ("sdpa_fwd", "sdpa_fwd_bwd"):
            if not hasattr(F, "scaled_dot_product_attention"):
                raise RuntimeError("this PyTorch has no scaled_dot_product_attention (2.0 or later)")
            shape = (r["b"], r["heads"], r["seq"], r["d"])
            grad = op == "sdpa_fwd_bwd"
            q, k, v = (self.rand(shape, dt, grad=grad) for _ in range(3))
            size = 8 * q.numel() * es
            if not grad:
                return (lambda: F.scaled_dot_product_attention(q, k, v, is_causal=r["causal"])), size

            def fwd_bwd():
                o = F.scaled_dot_product_attention(q, k, v, is_causal=r["causal"])
                return t.autograd.grad(o, (q, k, v), t.ones_like(o))
            return fwd_bwd, size
        n = r["numel"]
        if op == "batchnorm_fwd":
            c = r["c"]
            x = self.rand((n // (c * 56 * 56), c, 56, 56), dt)
            gamma, beta = self.rand((c,), dt), self.rand((c,), dt)
            mean, var = t.zeros(c, device=self.dev, dtype=dt), t.ones(c, device=self.dev, dtype=dt)
            return (lambda: F.batch_norm(x, mean, var, gamma, beta, True)), 2 * n * es
        width = min(n, 1024)
        x = self.rand((n // width, width), dt)
        if op == "add":
            y = self.rand((n // width, width), dt)
            return (lambda: x + y), 3 * n * es
        if op == "relu":
            return (lambda: t.relu(x)), 2 * n * es
        if op == "copy":
            y = t.empty_like(x)
            return (lambda: y.copy_(x)), 2 * n * es
        if op == "softmax":
            return (lambda: t.softmax(x, -1)), 2 * n * es
        return (lambda: F.layer_norm(x, (width,))), 2 * n * es

    def times_us(self, fn):
        """--reps timings of fn in microseconds, after --warmups calls."""
        t, a = self.torch, self.a
        for _ in range(a.warmups):
            fn()
        if a.device == "cpu":
            out = []
            for _ in range(a.reps):
                start = time.perf_counter()
                fn()
                out.append((time.perf_counter() - start) * 1e6)
            return out
        t.cuda.synchronize()
        if a.timing == "graph":
            side = t.cuda.Stream()
            side.wait_stream(t.cuda.current_stream())
            with t.cuda.stream(side):
                fn()
            t.cuda.current_stream().wait_stream(side)
            graph = t.cuda.CUDAGraph()
            with t.cuda.graph(graph):
                for _ in range(a.graph_repeat):
                    fn()
            graph.replay()  # the first replay uploads the graph: kept out of the timings
            t.cuda.synchronize()
            calls = a.graph_repeat
            run = graph.replay
        else:
            calls, run = 1, fn
        out = []
        for _ in range(a.reps):
            start, end = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            t.cuda.synchronize()
            out.append(start.elapsed_time(end) * 1e3 / calls)
        return out


def record_fields(r, size_bytes, times):
    out = {k: v for k, v in r.items() if k != "src"}
    if r["op"] in CONV_PASSES:
        out["flops"] = conv_flops(r)
    elif r["op"] in ("gemm", "bmm"):
        out["flops"] = 2.0 * r.get("batch", 1) * r["m"] * r["n"] * r["k"]
    elif r["op"] in ("sdpa_fwd", "sdpa_fwd_bwd"):
        f = 4.0 * r["b"] * r["heads"] * r["seq"] ** 2 * r["d"] * (0.5 if r["causal"] else 1.0)
        out["flops"] = f * (3.5 if r["op"] == "sdpa_fwd_bwd" else 1.0)
    else:
        out["bytes"] = size_bytes
    if "src" in r:
        out["src"] = r["src"]
    out["us"] = statistics.median(times)
    out["us_min"] = min(times)
    return out


def meta_block(a, torch, planned):
    m = {"device": torch.cuda.get_device_name() if a.device == "cuda" else "cpu (" + platform.machine() + ")",
         "torch": torch.__version__, "cudnn": torch.backends.cudnn.version() if a.device == "cuda" else None,
         "cuda": torch.version.cuda, "python": platform.python_version(), "seed": a.seed, "reps": a.reps,
         "warmups": a.warmups, "records_planned": planned, "skipped": [], "truncated": False}
    # timing_mode tells dlsim fit-kernels whether a kernel's time holds the host's dispatch (events) or not (graph)
    m["timing_mode"] = "dry-run" if a.device == "cpu" else a.timing
    if a.device == "cpu":
        m["timing"] = "dry run on the CPU: perf_counter around one call; measures nothing a GPU file could use"
    elif a.timing == "graph":
        m["timing"] = ("device time: %d calls captured in one CUDA graph, its replay timed with CUDA events, divided "
                       "by %d; median and min of %d replays after %d warm-ups" % (a.graph_repeat, a.graph_repeat,
                                                                                    a.reps, a.warmups))
    else:
        m["timing"] = ("CUDA events around one call (the host's dispatch of a short kernel included); median and min "
                       "of %d timings after %d warm-ups; same buffers" % (a.reps, a.warmups))
    return m


def main(argv):
    a = parse_args(argv)
    import torch
    if a.device == "cuda" and not torch.cuda.is_available():
        sys.exit("kernel_sweep.py: no CUDA device (use --device cpu --dry-run to check the tool without one)")
    started = time.monotonic()
    deadline = started + a.max_seconds
    work = work_list(a)
    runner = Runner(a)
    meta = meta_block(a, torch, len(work))
    records = []
    for r in work:
        if time.monotonic() > deadline:
            meta["truncated"] = True
            break
        try:
            fn, size = runner.call(r)
            if size > a.max_tensor_gib * 2 ** 30:
                raise RuntimeError("tensors of %.1f GiB, above --max-tensor-gib" % (size / 2 ** 30))
            times = runner.times_us(fn)
        except (RuntimeError, NotImplementedError) as e:  # an unsupported type, out of memory: noted, not fatal
            meta["skipped"].append({"op": r["op"], "dtype": r["dtype"], "reason": str(e).split("\n")[0][:200]})
            if a.device == "cuda":
                torch.cuda.empty_cache()
            continue
        records.append(record_fields(r, size, times))
    meta["records"] = len(records)
    with open(a.out, "w") as f:
        f.write('{"meta": ' + json.dumps(meta) + ',\n "seconds": %.1f,\n "records": [\n' % (time.monotonic() - started))
        f.write(",\n".join("  " + json.dumps(r) for r in records))
        f.write("\n]}\n")
    print("kernel_sweep.py: %d records (%d planned, %d skipped%s) written to %s" % (
        len(records), len(work), len(meta["skipped"]), ", cut short by --max-seconds" if meta["truncated"] else "",
        a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
