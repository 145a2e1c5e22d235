#!/usr/bin/env python3
"""PyTorch ground truth on a real GPU for dlsim's `pytorch-caching` pool and its iteration times.

Trains ResNet-50 (torchvision, fp32, SGD momentum 0.9, weight decay 1e-4) and BERT-base (the plain-PyTorch
module of validate/torch/torch_reference_transformers.py: BertModel + the tied masked-LM decoder, seq 128, Adam) with
PyTorch's default CUDA caching allocator, and records, per (model, batch, optimizer implementation):
  memory_stats()      reserved/allocated/requested peaks, segments, cudaMalloc/cudaFree counts, alloc retries
  max_memory_reserved the figure dlsim's pytorch-caching pool reports as peak_reserved_bytes
  iteration_ms        CUDA-event time of each timed iteration (median reported), after warm-up iterations

Each case runs in a fresh process so that the allocator starts empty. Two optimizer implementations are
measured: PyTorch's default for CUDA tensors (`foreach`, which makes temporaries the size of the gradients)
and `fused` (one in-place kernel per parameter group, what dlsim's optimizer op models).

The input batch (and labels) is created on the GPU each iteration, as a data loader's copy would be; gradients
are set to None between iterations (zero_grad's default). cudnn.benchmark stays False (the default), so cuDNN
picks algorithms by its heuristics, as dlsim-cuda does.

Usage (on the GPU machine): validate/torch/torch_gpu_ground_truth.py --out gt.json [--warmup 5] [--iters 20]
       validate/torch/torch_gpu_ground_truth.py --case resnet50,32,foreach   (one case, JSON on stdout)
       validate/torch/torch_gpu_ground_truth.py --profile resnet50,32 --out prof.json   (device time per ATen op)
"""
import argparse
import json
import os
import subprocess
import sys

CASES = [("resnet50", 32), ("resnet50", 64), ("bert-base", 16), ("bert-base", 32)]
OPTIMIZERS = ["foreach", "fused"]
SEQ = 128


def build_case(model_name, batch, impl):
    """The model, its optimizer and one training step, as the ground truth runs them."""
    import torch
    import torch.nn.functional as F
    torch.manual_seed(0)
    dev = torch.device("cuda")
    flags = {"foreach": True, "fused": False} if impl == "foreach" else {"foreach": False, "fused": True}
    if model_name == "resnet50":
        import torchvision
        model = torchvision.models.resnet50().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, **flags)

        def step():
            x = torch.randn(batch, 3, 224, 224, device=dev)
            y = torch.randint(0, 1000, (batch,), device=dev)
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad()
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from torch_reference_transformers import Bert, BERT_BASE
        model = Bert(BERT_BASE).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-4, **flags)

        def step():
            ids = torch.randint(1, BERT_BASE["vocab"], (batch, SEQ), device=dev)
            loss, _ = model(ids)
            loss.backward()
            opt.step()
            opt.zero_grad()
    model.train()
    return model, step


def run_case(model_name, batch, impl, warmup, iters):
    import torch
    model, step = build_case(model_name, batch, impl)
    times = []
    for i in range(warmup + iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        step()
        b.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(a.elapsed_time(b))
    st = torch.cuda.memory_stats()
    keep = ["reserved_bytes.all.peak", "allocated_bytes.all.peak", "requested_bytes.all.peak",
            "reserved_bytes.all.current", "allocated_bytes.all.current", "segment.all.peak",
            "segment.large_pool.peak", "segment.small_pool.peak", "num_alloc_retries", "num_ooms",
            "num_device_alloc", "num_device_free", "num_sync_all_streams"]
    params = sum(p.numel() for p in model.parameters())
    times_sorted = sorted(times)
    return {"model": model_name, "batch": batch, "seq_len": SEQ if model_name == "bert-base" else None,
            "optimizer_impl": impl, "params": params,
            "max_memory_reserved": torch.cuda.max_memory_reserved(),
            "max_memory_allocated": torch.cuda.max_memory_allocated(),
            "memory_stats": {k: st.get(k) for k in keep},
            "iteration_ms": times, "iteration_ms_median": times_sorted[len(times_sorted) // 2],
            "warmup": warmup, "iters": iters}


def profile_case(model_name, batch, impl, warmup, iters):
    """Device time per iteration of each ATen op (self time of its kernels), from torch.profiler."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    model, step = build_case(model_name, batch, impl)
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(iters):
            step()
        torch.cuda.synchronize()
    ops = {}
    for e in prof.key_averages():
        t = getattr(e, "self_device_time_total", None)
        if t is None:
            t = e.self_cuda_time_total
        if t > 0:
            ops[e.key] = {"us_per_iteration": t / iters, "calls_per_iteration": e.count / iters}
    kernels = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            k = kernels.setdefault(e.name, [0.0, 0])
            k[0] += e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
            k[1] += 1
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:60]
    # Kernel time alone: the ATen rows' self device time is that of their kernels, so summing both would count
    # every kernel twice.
    return {"model": model_name, "batch": batch, "optimizer_impl": impl, "iters": iters,
            "aten_ops": ops, "device_us_per_iteration": sum(v[0] for v in kernels.values()) / iters,
            "top_kernels": [{"name": n, "us_per_iteration": v[0] / iters, "calls_per_iteration": v[1] / iters}
                            for n, v in top]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--case")
    ap.add_argument("--profile", help="MODEL,BATCH[,IMPL]: per-op device times of one case, JSON on stdout")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    args = ap.parse_args()
    if args.profile:
        parts = args.profile.split(",")
        r = profile_case(parts[0], int(parts[1]), parts[2] if len(parts) > 2 else "foreach", args.warmup, 5)
        text = json.dumps(r, indent=1, sort_keys=True) + "\n"
        if args.out:
            with open(args.out, "w") as f:
                f.write(text)
        else:
            sys.stdout.write(text)
        return
    if args.case:
        m, b, impl = args.case.split(",")
        print(json.dumps(run_case(m, int(b), impl, args.warmup, args.iters)))
        return
    import torch
    env = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
           "device": torch.cuda.get_device_name(0), "allow_tf32_cudnn": torch.backends.cudnn.allow_tf32,
           "allow_tf32_matmul": torch.backends.cuda.matmul.allow_tf32,
           "cudnn_benchmark": torch.backends.cudnn.benchmark,
           "PYTORCH_CUDA_ALLOC_CONF": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}
    runs = []
    for m, b in CASES:
        for impl in OPTIMIZERS:
            cmd = [sys.executable, os.path.abspath(__file__), "--case", f"{m},{b},{impl}",
                   "--warmup", str(args.warmup), "--iters", str(args.iters)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                runs.append({"model": m, "batch": b, "optimizer_impl": impl, "error": p.stderr[-2000:]})
                print(f"{m} b{b} {impl}: FAILED\n{p.stderr[-2000:]}", flush=True)
                continue
            r = json.loads(p.stdout.strip().splitlines()[-1])
            runs.append(r)
            print(f"{m} b{b} {impl}: reserved {r['max_memory_reserved']} allocated {r['max_memory_allocated']} "
                  f"iteration {r['iteration_ms_median']:.2f} ms", flush=True)
    out = {"environment": env, "runs": runs}
    text = json.dumps(out, indent=1, sort_keys=True) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
