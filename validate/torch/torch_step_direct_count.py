#!/usr/bin/python3
"""PyTorch's own count of a training step on the CPU, with real tensors: the check of what `dlsim import-torch`
records on fake tensors (frontend/torch/, docs/torch-step.md). Nothing here uses the recorder's way of following
storages (finalizers on tensor objects): the figures come from the CPU allocator itself and from real addresses.

The same workload, numerics, optimizer and checkpointing as the tracer (its own modules build them), one unrecorded
step, then the measured step:
  parameters           model.parameters(), elements
  existing_bytes       distinct storages alive before the step (parameters, buffers, gradients, optimizer state
                       without the host step counts, inputs), by data pointer
  saved_bytes          distinct storages autograd packs during forward (saved_tensors_hooks, by data pointer), the
                       existing ones excluded: what the trace's summary calls saved_for_backward_bytes
  allocator_peak       the CPU allocator's own running total over the step (torch.profiler's memory events), plus
                       existing_bytes: everything, a kernel's scratch buffers (MKL-DNN's) included
  boundary_peak        the same total sampled only between top-level ops (after one ends, before the next begins):
                       what is alive between kernels, scratch excluded
The trace's peak_live_bytes counts what is alive while each op runs, its outputs included and scratch excluded, so
it lies between the two: boundary_peak <= trace <= allocator_peak, and the table in docs/torch-step.md says by how
much each differs and why.

Usage: validate/torch/torch_step_direct_count.py SPEC --batch B [--seq-len S] [--precision P] [--optimizer O]
       [--checkpointing C] [--trace FILE.torchstep.json]   (with --trace: the trace's figures printed beside)
Small batches only: the step runs for real on the CPU.
"""
import argparse
import gc
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "frontend", "torch"))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import step_trace  # noqa: E402
from model_specs import build_workload  # noqa: E402
from torch_compat import untyped_storage  # noqa: E402
from training_step import LossScale, apply_checkpointing, make_optimizer, run_step  # noqa: E402


def ptr_bytes(t):
    s = untyped_storage(t)
    return s.data_ptr(), int(s.nbytes())


def existing_storages(model, optimizer, scaler, inputs):
    found = {}
    tensors = list(model.parameters()) + list(model.buffers()) + list(inputs.values())
    tensors += [p.grad for p in model.parameters() if p.grad is not None]
    for state in optimizer.state.values():
        tensors += [v for k, v in state.items() if isinstance(v, torch.Tensor) and not (k == "step" and v.dim() == 0)]
    if scaler is not None:
        tensors += [scaler.scale, scaler.growth_tracker]
    for t in tensors:
        p, n = ptr_bytes(t)
        if n:
            found[p] = n
    return found


def allocator_peaks(prof, existing):
    """(allocator_peak, boundary_peak) from the profiler's memory events and top-level op intervals."""
    events = list(prof.profiler.kineto_results.events())
    memory = [(e.start_us(), i, e.nbytes()) for i, e in enumerate(events) if e.name() == "[memory]"]
    ops = sorted((e.start_us(), e.start_us() + e.duration_us()) for e in events
                 if e.name() != "[memory]" and e.duration_us() >= 0 and not e.name().startswith("ProfilerStep"))
    top, end = [], -1
    for s, e in ops:  # an op inside another's interval is its child
        if s >= end:
            top.append((s, e))
            end = e
        else:
            end = max(end, e)
    memory.sort()
    running, peak, samples, k = existing, existing, [], 0
    boundaries = sorted([(s, 0) for s, _ in top] + [(e, 1) for _, e in top])
    for ts, kind in boundaries:
        # events at a start's instant belong to the op (after it began); at an end's instant, to the op (before it ended)
        while k < len(memory) and (memory[k][0] < ts or (kind == 1 and memory[k][0] == ts)):
            running += memory[k][2]
            peak = max(peak, running)
            k += 1
        samples.append(running)
    while k < len(memory):
        running += memory[k][2]
        peak = max(peak, running)
        k += 1
    return peak, max(samples + [existing])


def measure(a):
    workload = build_workload(a.spec, a.batch, a.seq_len, a.image_size)
    for t in workload.inputs.values():
        if t.is_floating_point():
            t.normal_()
    model = workload.model
    model.train()
    if a.precision == "bf16":
        model.to(torch.bfloat16)
    blocks = step_trace.find_blocks(model)
    apply_checkpointing(a.checkpointing, model, [m for _, m in blocks])
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = make_optimizer(a.optimizer, params)
    scaler = LossScale(torch.device("cpu")) if a.precision == "mixed-fp16" else None
    run_step(workload, optimizer, a.precision, scaler)
    gc.collect()
    gc.disable()
    existing = existing_storages(model, optimizer, scaler, workload.inputs)
    saved = {}
    phase = {"forward": True}

    def pack(t):
        d = t.detach()
        if phase["forward"]:
            p, n = ptr_bytes(d)
            if p not in existing and n:
                saved[p] = n
        return d

    class Phases:  # run_step marks its phases on a recorder; this one only notes when forward ends
        def __setattr__(self, k, v):
            if k == "phase":
                phase["forward"] = v == "forward"

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda d: d):
            run_step(workload, optimizer, a.precision, scaler, Phases())
    gc.enable()
    existing_bytes = sum(existing.values())
    peak, boundary = allocator_peaks(prof, existing_bytes)
    return {"spec": a.spec, "batch": a.batch, "torch": torch.__version__,
            "parameters": sum(p.numel() for p in model.parameters()), "existing_bytes": existing_bytes,
            "saved_bytes": sum(saved.values()), "allocator_peak": peak, "boundary_peak": boundary}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("spec")
    p.add_argument("--batch", type=int, required=True)
    p.add_argument("--seq-len", type=int, default=0)
    p.add_argument("--image-size", type=int, default=0)
    p.add_argument("--precision", default="fp32")
    p.add_argument("--optimizer", default="sgd-momentum")
    p.add_argument("--checkpointing", default="none")
    p.add_argument("--trace", help="a trace of the same step: its summary is printed beside")
    a = p.parse_args()
    out = measure(a)
    if a.trace:
        with open(a.trace, encoding="ascii") as f:
            s = json.load(f)["summary"]
        out["trace"] = {"parameters": s["parameters"], "existing_bytes": sum(s["existing_bytes_by_kind"].values()),
                        "saved_bytes": s["saved_for_backward_bytes"], "peak_live_bytes": s["peak_live_bytes"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
