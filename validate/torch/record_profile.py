#!/usr/bin/env python3
"""Records torch.profiler's trace of real training steps, the input of `dlsim calibrate --torch-profile`
(docs/host.md, "Calibrating the host from your own profile").

  validate/torch/record_profile.py SPEC --batch B [--image-size S] [--seq-len L] [--device cpu|cuda]
      [--optimizer sgd-momentum|adam|adamw] [--warmup 3] [--steps 2] [--timed 10] --out TRACE.json

SPEC is what `dlsim import-torch` takes (frontend/torch/model_specs.py): torchvision:NAME, hf:CONFIG.json or
FILE.py:FUNCTION, so that the same model can be recorded as a dlsim graph (import-torch) and profiled here. The
step is the one import-torch records: forward and cross-entropy (or the spec's loss), backward, the optimizer's
foreach step, zero_grad(set_to_none=True); fp32. Inputs are random (torch.manual_seed(0)).

What it does:
1. --warmup steps unprofiled (the optimizer's state, cuDNN's plan cache, the caching allocator's pools);
2. --timed steps unprofiled, each timed on the host's clock (synchronised on a GPU): their median is the eager
   step without the profiler, which the calibration needs to take the profiler's own overhead out;
3. --steps steps under torch.profiler (record_shapes=True; CPU, and CUDA on a GPU), each marked ProfilerStep#N by
   prof.step(), written with export_chrome_trace. The median of step 2 is added to the trace as the top-level
   object "dlsim": {"unprofiled_step_us": ..., ...}; the rest of the file is the profiler's own.
On a GPU (--device cuda) the trace holds the kernels too (cat "kernel", linked to their launches by correlation
ids), from which calibrate fits the kernel classes' corrections.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "frontend", "torch"))

import torch  # noqa: E402

from model_specs import SpecError, build_workload  # noqa: E402
from training_step import OPTIMIZERS, make_optimizer  # noqa: E402


def fill_random(inputs, device):
    """The spec's inputs are allocated, not filled (import-torch never reads them): random floats, zero labels."""
    out = {}
    for k, v in inputs.items():
        out[k] = (torch.randn(v.shape, dtype=v.dtype) if v.is_floating_point() else v.clone()).to(device)
    return out


def step(workload, optimizer):
    loss = workload.loss_fn(workload.model, workload.inputs)
    loss.backward()
    del loss
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def timed_steps(workload, optimizer, n, sync):
    """The host clock around each of n steps, each ended by `sync` (a synchronise on a GPU): µs per step."""
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step(workload, optimizer)
        sync()
        times.append((time.perf_counter() - t0) * 1e6)
    return times


def profiled_steps(workload, optimizer, n, device, sync, path):
    """n steps under torch.profiler (record_shapes; CUDA activities on a GPU), exported to `path` and read back
    as Chrome's object form {"traceEvents": [...], ...}."""
    activities = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    # A schedule, so that each step is a ProfilerStep#N span: one step waited (not recorded), one warm-up step
    # (the profiler starts, its events dropped), then the recorded steps.
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=n, repeat=1)
    with torch.profiler.profile(activities=activities, record_shapes=True, schedule=schedule) as prof:
        for _ in range(n + 2):
            step(workload, optimizer)
            sync()
            prof.step()
    prof.export_chrome_trace(path)
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    if isinstance(trace, list):  # PyTorch 1.x writes Chrome's JSON Array Format: the events alone
        trace = {"traceEvents": trace}
    return trace


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("spec", metavar="SPEC")
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--image-size", type=int, default=0)
    ap.add_argument("--seq-len", type=int, default=0)
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--optimizer", default="sgd-momentum", choices=OPTIMIZERS)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: PyTorch's default)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    if a.batch < 1 or a.steps < 1 or a.warmup < 1 or a.timed < 1:
        print("record_profile: --batch, --steps, --warmup and --timed must be at least 1", file=sys.stderr)
        return 2
    if a.device == "cuda" and not torch.cuda.is_available():
        print("record_profile: --device cuda but torch sees no GPU", file=sys.stderr)
        return 3
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    try:
        workload = build_workload(a.spec, a.batch, a.seq_len, a.image_size)
    except SpecError as e:
        print(f"record_profile: {e}", file=sys.stderr)
        return 2
    workload.model.to(a.device).train()
    workload.inputs = fill_random(workload.inputs, a.device)
    optimizer = make_optimizer(a.optimizer, workload.model.parameters())
    sync = torch.cuda.synchronize if a.device == "cuda" else (lambda: None)

    for _ in range(a.warmup):
        step(workload, optimizer)
    sync()
    times = timed_steps(workload, optimizer, a.timed, sync)
    trace = profiled_steps(workload, optimizer, a.steps, a.device, sync, a.out)
    trace["dlsim"] = {
        "unprofiled_step_us": round(statistics.median(times), 1),
        "unprofiled_steps": a.timed,
        "spec": a.spec, "batch": a.batch, "image_size": a.image_size, "seq_len": a.seq_len,
        "device": torch.cuda.get_device_name() if a.device == "cuda" else platform.processor() or platform.machine(),
        "threads": torch.get_num_threads(), "optimizer": a.optimizer,
        "torch": torch.__version__, "python": platform.python_version(),
    }
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(trace, f, separators=(",", ":"))
    events = sum(1 for e in trace.get("traceEvents", []) if e.get("ph") == "X")
    print(f"record_profile: {a.spec} batch {a.batch} on {a.device}: unprofiled step "
          f"{statistics.median(times) / 1000:.2f} ms (median of {a.timed}); {a.steps} profiled steps, {events} events, "
          f"{os.path.getsize(a.out)} bytes: {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
