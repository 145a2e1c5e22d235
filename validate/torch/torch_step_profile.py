#!/usr/bin/env python3
"""Measures PyTorch training steps on a GPU in the format of shared/data/gpu/*/pytorch-step-profiles.json, and
keeps each step's torch.profiler trace for `dlsim calibrate --torch-profile`.

  validate/torch/torch_step_profile.py --out profiles.json [--cases resnet50:32,googlenet:32,...]
      [--trace-dir DIR] [--max-seconds 200] [--warmup 5] [--timed 10] [--profiled 2] [--replays 10]

Each case (a torchvision model at a batch) runs in a fresh process, so that each starts with an empty caching
allocator and cuDNN's plan cache is the model's own. The step is the one `dlsim import-torch torchvision:NAME`
records (frontend/torch/model_specs.py, training_step.py): fp32, cross entropy on random inputs, backward, SGD with
momentum 0.9 (PyTorch's foreach step) and, as the shared 2026-11-27 profiles were measured, --weight-decay 1e-4 (one
out-of-place foreach add more than import-torch's step; 0 leaves it out), zero_grad(set_to_none=True);
cudnn.benchmark off and TF32 for convolutions only (PyTorch's defaults). Per case:
  eager_wall_ms_median / _min   host clock around each of --timed steps, each followed by a synchronise
  max_memory_reserved / _allocated_bytes   over those eager steps (peaks reset after the warm-up)
  kernels_per_iteration, gpu_busy_ms_per_iteration (the union of kernel intervals), kernel_span_ms_per_iteration
      (first kernel start to last kernel end, per step), host_top_ops ([aten op, calls, host ms] per step for
      top-level aten ops, their CPU time including children): from --profiled steps under torch.profiler
  graph_replay_ms_median / _min   the whole step captured in one torch.cuda.CUDAGraph (warm-up on a side stream,
      as PyTorch's documentation does it), each of --replays replays timed with CUDA events: the device alone
      (Adam/AdamW rebuilt with capturable=True for the capture, named in graph_optimizer: PyTorch refuses to
      capture it otherwise; the H100 lease of 2026-11-27 predates this and has no LLM replay)
  graph_replay_pipelined_ms   --replays replays back to back between two events, over --replays
  graph_kernels_per_replay, graph_busy_ms_per_replay   with --trace-dir: --profiled replays under torch.profiler
      (their trace CASE.replay.json.gz beside the step's): what the captured step runs, kernel by kernel
With --trace-dir, the profiler's Chrome trace of each case is written there (gzip), with the top-level object
"dlsim" that validate/torch/record_profile.py adds (the unprofiled step's median among it), so that
`dlsim calibrate --torch-profile` reads it after gunzip.
Without a GPU the script says so and exits 3; results are written after every case, so a run stopped by a
timeout keeps the finished ones.
"""
import argparse
import datetime
import gzip
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "frontend", "torch"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# The three cases of the shared 2026-11-27 profiles first (a repeat on another machine), then the zoo's other CNNs,
# then models the zoo does not build (they come in through dlsim import-torch)
DEFAULT_CASES = ("resnet50:32,mobilenet_v2:64,googlenet:32,inception_v3:32,resnet18:32,vgg16:32,densenet121:32,"
                 "resnet101:32,squeezenet1_1:64,alexnet:128,resnet152:32,efficientnet_b0:32,shufflenet_v2_x1_0:64")
PRECISIONS = ("fp32", "mixed-bf16")
OPTIMIZERS = ("sgd-momentum", "adamw")


def parse_case(text):
    """'NAME:BATCH' (a torchvision CNN, fp32, SGD) or 'hf:CONFIG.json:BATCH:SEQ:PRECISION:OPTIMIZER' (a Hugging Face
    causal LM as import-torch builds it, e.g. mixed-bf16 with AdamW) -> the case dict; ValueError names the fault."""
    if text.startswith("hf:"):
        parts = text[3:].rsplit(":", 4)
        if len(parts) != 5 or parts[3] not in PRECISIONS or parts[4] not in OPTIMIZERS:
            raise ValueError(f"'{text}': expected hf:CONFIG.json:BATCH:SEQ:PRECISION:OPTIMIZER with PRECISION one of "
                             f"{', '.join(PRECISIONS)} and OPTIMIZER one of {', '.join(OPTIMIZERS)}")
        if not (parts[1].isdigit() and parts[2].isdigit() and int(parts[1]) > 0 and int(parts[2]) > 0):
            raise ValueError(f"'{text}': BATCH '{parts[1]}' and SEQ '{parts[2]}' must be positive integers")
        path, batch, seq = parts[0], int(parts[1]), int(parts[2])
        name = os.path.basename(path).replace(".config.json", "").replace(".json", "")
        return {"spec": "hf:" + path, "batch": batch, "seq_len": seq, "precision": parts[3], "optimizer": parts[4],
                "case": f"{name}-b{batch}-s{seq}-{parts[3]}"}
    name, _, batch = text.partition(":")
    if not name or not batch.isdigit() or int(batch) < 1:
        raise ValueError(f"'{text}': expected MODEL:BATCH (a torchvision name and a batch of at least 1)")
    return {"spec": "torchvision:" + name, "batch": int(batch), "seq_len": 0, "precision": "fp32",
            "optimizer": "sgd-momentum", "case": f"{name}-b{int(batch)}"}


def top_level_ops(events, steps):
    """[name, calls per step, host ms per step] of the aten ops that no other aten op on their thread encloses."""
    per_tid = {}
    for e in events:
        # aten ops alone: autograd's evaluate_function and the optimizer's record_function spans enclose them
        if e.get("ph") == "X" and e.get("cat") == "cpu_op" and str(e.get("name", "")).startswith("aten::"):
            per_tid.setdefault(e.get("tid"), []).append(e)
    totals = {}
    for ops in per_tid.values():
        ops.sort(key=lambda e: (e["ts"], -e.get("dur", 0)))
        open_until = -1.0
        for e in ops:
            if e["ts"] < open_until:  # inside the enclosing top-level op
                continue
            open_until = e["ts"] + e.get("dur", 0)
            calls, us = totals.get(e["name"], (0, 0.0))
            totals[e["name"]] = (calls + 1, us + e.get("dur", 0))
    rows = [[name, calls / steps, us / 1000.0 / steps] for name, (calls, us) in totals.items()]
    rows.sort(key=lambda r: -r[2])
    return rows


def kernel_stats(events, steps):
    """Kernels per step, the union of their intervals per step (ms), and each step's first-to-last span (ms)."""
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    launches = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                   if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    busy, end = 0.0, -1.0
    for s, d in sorted((k["ts"], k["ts"] + k["dur"]) for k in kernels):
        if d <= end:
            continue
        busy += d - max(s, end)
        end = d
    per_step = {}
    for k in kernels:
        t = launches.get(k.get("args", {}).get("correlation"))
        if t is None:
            continue
        for i, (s, d) in enumerate(spans):
            if s <= t <= d:
                lo, hi = per_step.get(i, (k["ts"], k["ts"] + k["dur"]))
                per_step[i] = (min(lo, k["ts"]), max(hi, k["ts"] + k["dur"]))
                break
    span = statistics.mean(hi - lo for lo, hi in per_step.values()) / 1000.0 if per_step else None
    return len(kernels) / steps, busy / 1000.0 / steps, span


def run_case(c, a):
    import torch
    from model_specs import build_workload
    from record_profile import fill_random, profiled_steps, step, timed_steps
    from training_step import make_optimizer
    torch.manual_seed(0)
    w = build_workload(c["spec"], c["batch"], c["seq_len"], 0)
    cuda = a.device == "cuda"
    w.model.to(a.device).train()
    w.inputs = fill_random(w.inputs, a.device)
    if c["optimizer"] == "sgd-momentum":
        opt = torch.optim.SGD(w.model.parameters(), lr=0.01, momentum=0.9, weight_decay=a.weight_decay, foreach=True)
    else:  # the optimizer import-torch's step uses (training_step.make_optimizer)
        opt = make_optimizer(c["optimizer"], [p for p in w.model.parameters() if p.requires_grad])
    if c["precision"] == "mixed-bf16":  # autocast around forward and loss, as training_step.run_step does
        plain_loss = w.loss_fn
        w.loss_fn = lambda model, inputs: _autocast_loss(torch, plain_loss, model, inputs, a.device)
    name, batch = c["case"], c["batch"]
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(a.warmup):
        step(w, opt)
    sync()
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    times = [us / 1000.0 for us in timed_steps(w, opt, a.timed, sync)]
    rec = {"case": name, "spec": c["spec"], "batch": batch, "seq_len": c["seq_len"], "precision": c["precision"],
           "optimizer": c["optimizer"], "device": torch.cuda.get_device_name() if cuda else "cpu",
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "eager_wall_ms_median": statistics.median(times), "eager_wall_ms_min": min(times), "eager_steps": a.timed,
           "max_memory_reserved_bytes": torch.cuda.max_memory_reserved() if cuda else None,
           "max_memory_allocated_bytes": torch.cuda.max_memory_allocated() if cuda else None}

    if a.trace_dir:
        os.makedirs(a.trace_dir, exist_ok=True)
    tmp = os.path.join(a.trace_dir or "/tmp", f"{name}.json")
    trace = profiled_steps(w, opt, a.profiled, a.device, sync, tmp)
    os.remove(tmp)
    events = trace["traceEvents"]
    rec["profiled_iterations"] = a.profiled
    (rec["kernels_per_iteration"], rec["gpu_busy_ms_per_iteration"],
     rec["kernel_span_ms_per_iteration"]) = kernel_stats(events, a.profiled)
    rec["host_top_ops"] = top_level_ops(events, a.profiled)[:40]
    if a.trace_dir:
        trace["dlsim"] = {"unprofiled_step_us": round(statistics.median(times) * 1000.0, 1),
                          "unprofiled_steps": a.timed, "spec": c["spec"], "batch": batch,
                          "image_size": 0, "seq_len": c["seq_len"], "precision": c["precision"], "device": rec["device"],
                          "threads": torch.get_num_threads(), "optimizer": c["optimizer"],
                          "weight_decay": a.weight_decay if c["optimizer"] == "sgd-momentum" else None,
                          "torch": torch.__version__, "python": platform.python_version()}
        with gzip.open(tmp + ".gz", "wt", encoding="utf-8") as f:
            json.dump(trace, f, separators=(",", ":"))

    if not cuda:
        return rec
    try:  # the whole step in one CUDA graph: warm-up on a side stream, then capture (PyTorch's documented recipe)
        if c["optimizer"] != "sgd-momentum":
            # Adam(W) refuses capture unless capturable=True (its step count then lives on the device), which is
            # what a user who captures the step sets; SGD captures as it is.
            import inspect
            accepted = inspect.signature(type(opt).__init__).parameters
            kwargs = {k: v for k, v in opt.defaults.items() if k in accepted}
            opt = type(opt)(opt.param_groups[0]["params"], **{**kwargs, "capturable": True})
            rec["graph_optimizer"] = f"{type(opt).__name__}(capturable=True)"
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step(w, opt)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(graph):
            loss = w.loss_fn(w.model, w.inputs)
            loss.backward()
            opt.step()
        for _ in range(3):
            graph.replay()
        sync()
        replays = []
        for _ in range(a.replays):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            graph.replay()
            e1.record()
            e1.synchronize()
            replays.append(e0.elapsed_time(e1))
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for _ in range(a.replays):
            graph.replay()
        e1.record()
        e1.synchronize()
        rec.update(graph_replay_ms_median=statistics.median(replays), graph_replay_ms_min=min(replays),
                   graph_replay_pipelined_ms=e0.elapsed_time(e1) / a.replays, graph_replays=a.replays)
        if a.trace_dir:
            replay_trace = os.path.join(a.trace_dir, f"{name}.replay.json")
            rec.update(profiled_replays(torch, graph, a.profiled, sync, replay_trace))
    except Exception as e:  # noqa: BLE001  (a capture that fails is a result, recorded as such)
        rec["graph_error"] = f"{type(e).__name__}: {e}"[:500]
    return rec


def profiled_replays(torch, graph, n, sync, path):
    """n replays of the captured step under torch.profiler (CUDA activity), their trace written to path + .gz: the
    replay's own kernels, which need not be the eager step's (a capturable optimizer; Hugging Face models take their
    static mask path while a stream captures: validate/torch/hf_capture_path.py). Kernels and busy time per replay."""
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                            torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            graph.replay()
        sync()
    prof.export_chrome_trace(path)
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    os.remove(path)
    with gzip.open(path + ".gz", "wt", encoding="utf-8") as f:
        json.dump(trace, f, separators=(",", ":"))
    kernels, busy, _ = kernel_stats(trace["traceEvents"], n)
    return {"graph_kernels_per_replay": kernels, "graph_busy_ms_per_replay": busy, "graph_profiled_replays": n}


def _autocast_loss(torch, loss_fn, model, inputs, device):
    with torch.autocast("cuda" if device == "cuda" else "cpu", dtype=torch.bfloat16):
        return loss_fn(model, inputs)


def meta(argv):
    info = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": argv, "python": platform.python_version(), "host": platform.node()}
    try:
        import torch
        import torchvision
        info.update(torch=torch.__version__, torchvision=torchvision.__version__, cuda=torch.version.cuda,
                    cudnn=torch.backends.cudnn.version())
        if torch.cuda.is_available():
            info["device"] = torch.cuda.get_device_name()
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,name,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        info["nvidia_smi"] = smi.stdout.strip()
    except Exception as e:  # noqa: BLE001  (meta is best effort; the records carry the essentials)
        info["meta_error"] = str(e)
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="the JSON file written after every case")
    ap.add_argument("--cases", default=DEFAULT_CASES,
                    help="MODEL:BATCH,... (torchvision names) or hf:CONFIG.json:BATCH:SEQ:PRECISION:OPTIMIZER")
    ap.add_argument("--trace-dir")
    ap.add_argument("--max-seconds", type=float, default=200.0)
    ap.add_argument("--case-timeout", type=float, default=90.0)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--timed", type=int, default=10)
    ap.add_argument("--profiled", type=int, default=2)
    ap.add_argument("--replays", type=int, default=10)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--device", default="cuda", help=argparse.SUPPRESS)  # cpu: a check of the child's code alone
    a = ap.parse_args()
    try:
        if a.child:
            print(json.dumps(run_case(parse_case(a.child), a)))
            return 0
        cases = [parse_case(c) for c in a.cases.split(",") if c]
    except ValueError as e:
        ap.error(f"--cases: {e} (expected MODEL:BATCH,... or hf:CONFIG.json:BATCH:SEQ:PRECISION:OPTIMIZER)")
    if not a.out:
        ap.error("--out is required")
    import torch
    if not torch.cuda.is_available():
        print("torch_step_profile: torch sees no GPU; nothing measured", file=sys.stderr)
        return 3
    if a.trace_dir:
        os.makedirs(a.trace_dir, exist_ok=True)
    doc = {"meta": meta(sys.argv), "records": [], "skipped": [], "failed": []}
    start = time.monotonic()
    for text, c in zip([t for t in a.cases.split(",") if t], cases):
        if time.monotonic() - start > a.max_seconds:
            doc["skipped"].append(text)
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--child", text]
        for k in ("warmup", "timed", "profiled", "replays", "weight_decay"):
            cmd += ["--" + k.replace("_", "-"), str(getattr(a, k))]
        if a.trace_dir:
            cmd += ["--trace-dir", a.trace_dir]
        t0 = time.monotonic()
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.case_timeout)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            if r.returncode == 0 and lines:
                rec = json.loads(lines[-1])
                rec["seconds"] = round(time.monotonic() - t0, 1)
                doc["records"].append(rec)
            else:
                doc["failed"].append({"case": text, "rc": r.returncode, "stderr": r.stderr[-1500:]})
        except subprocess.TimeoutExpired:
            doc["failed"].append({"case": text, "rc": "timeout", "seconds": a.case_timeout})
        with open(a.out, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
    print(f"{'case':24} {'eager ms':>9} {'replay ms':>9} {'busy ms':>8} {'kernels':>8} {'reserved MiB':>12}")
    for r in doc["records"]:
        print(f"{r['case']:24} {r['eager_wall_ms_median']:9.2f} {r.get('graph_replay_ms_median', float('nan')):9.2f} "
              f"{r['gpu_busy_ms_per_iteration']:8.2f} {r['kernels_per_iteration']:8.0f} "
              f"{r['max_memory_reserved_bytes'] / 2**20:12.1f}")
    for f in doc["failed"]:
        print(f"FAILED {f['case']}: rc {f['rc']} {str(f.get('stderr', ''))[-300:]}")
    if doc["skipped"]:
        print(f"skipped (time budget): {', '.join(doc['skipped'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
