#!/usr/bin/env python3
"""The caching allocator's truth for real training steps on a GPU (issue 29, item 4).

  validate/torch/torch_memory_truth.py --out FILE.json [--max-seconds 200] [--case-timeout 120]
      [--warmup 3] [--steps 2] [--max-entries 1000000]
      [--spec SPEC --batch B [--seq-len L] [--image-size S] [--precision P] [--optimizer O] [--checkpointing C]]
  validate/torch/torch_memory_truth.py --device cpu --dry-run --out FILE.json [--spec ... at a tiny size]

Each case is the step `dlsim import-torch` traces (frontend/torch/training_step.py: run_step, make_optimizer,
apply_checkpointing, LossScale; the same option names), run for real so that its figures stand beside the trace's
and beside dlsim's pytorch-caching pool: --warmup steps, reset_peak_memory_stats, then --steps measured steps.
Recorded per case: torch.cuda.memory_stats()'s peaks (reserved, allocated, requested, active; retries, OOMs, segment
counts), max_memory_reserved/allocated, the reserved, allocated and segment counts after each warm-up step, and a memory-history snapshot (_record_memory_history, C++ and Python
stacks when this PyTorch has them) from which come (a) the peak of allocated bytes over the measured steps and
what is live there, grouped by the frame that made it and the 30 largest blocks, and (b) the blocks allocated by
cuDNN/cuBLAS workspaces (which the fake-tensor trace cannot see). --stacks trace records the history without stacks
(the requests' sizes and order, each cudaMalloc's request); --stacks none records no history: the peaks alone.

Each case runs in a fresh process: the allocator, cuDNN's plans and cuBLAS's handles start empty, as in the
user's own run, and a case that dies (OOM, timeout, crash) cannot spoil the next. The JSON is rewritten after
every case, so a run killed midway keeps the finished ones. Exit codes: 0 written; 2 bad arguments; 3 no GPU
(no result is faked: only `--device cpu --dry-run` runs without one, and its CUDA-only fields are null).
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FRONTEND = os.path.join(ROOT, "frontend", "torch")
sys.path.insert(0, FRONTEND)

from training_step import CHECKPOINTING, OPTIMIZERS, PRECISIONS  # noqa: E402  (no torch import)

QWEN = "hf:" + os.path.join("workloads", "testdata", "llama_configs", "Qwen2.5-0.5B.config.json")
MIB = 1 << 20


def case(spec, batch, seq_len=0, image_size=0, precision="fp32", optimizer="sgd-momentum", checkpointing="none"):
    return {"spec": spec, "batch": batch, "seq_len": seq_len, "image_size": image_size, "precision": precision,
            "optimizer": optimizer, "checkpointing": checkpointing}


# Most informative first, so that a --max-seconds cut leaves the cases the issue needs: the LLM with and without
# checkpointing (autocast caches, cuBLAS workspaces, the logits' peak), then the CNNs (cuDNN workspaces).
DEFAULT_CASES = [
    case(QWEN, 4, seq_len=2048, precision="mixed-bf16", optimizer="adamw", checkpointing="none"),
    case(QWEN, 4, seq_len=2048, precision="mixed-bf16", optimizer="adamw", checkpointing="hf"),
    case("torchvision:resnet50", 32),
    case("torchvision:vgg16", 64),
    case("torchvision:inception_v3", 32, image_size=299),
    case("torchvision:mobilenet_v2", 64),
    case("torchvision:googlenet", 32),
    case("torchvision:densenet121", 32),
    case(QWEN, 1, seq_len=2048, precision="mixed-bf16", optimizer="adamw", checkpointing="none"),
    case(QWEN, 1, seq_len=2048, precision="mixed-bf16", optimizer="adamw", checkpointing="hf"),
]
DRY_RUN_CASE = case("torchvision:resnet18", 2, image_size=64)


def case_name(c):
    size = f" s{c['seq_len']}" if c["seq_len"] else (f" {c['image_size']}px" if c["image_size"] else "")
    ckpt = f" ckpt={c['checkpointing']}" if c["checkpointing"] != "none" else ""
    return f"{c['spec'].split('/')[-1]} b{c['batch']}{size} {c['precision']} {c['optimizer']}{ckpt}"


# ---------------------------------------------------------------------------------------------------------------
# The snapshot's analysis (pure functions of the snapshot dict: testable without a GPU).

# Frames that say a block is a library's scratch memory: cuDNN's (Conv_v7's Workspace, Conv_v8's run_conv_plan
# allocates it raw), cuBLAS's per-handle and cuBLASLt workspaces (CublasHandlePool's getNewWorkspace, ...).
LIBRARY_FRAME = re.compile(r"cudnn|cublas|at::cuda::blas|workspace", re.IGNORECASE)
# A block made as a tensor (at::empty and friends) is an op's output even inside a cuDNN/cuBLAS op; a workspace is
# allocated raw, with no tensor constructor between the allocator and the library frame.
TENSOR_FRAME = re.compile(r"\bempty|TensorImpl|make_tensor|new_empty|at::detail::", re.IGNORECASE)
WORKSPACE_NAME = re.compile(r"workspace", re.IGNORECASE)
BACKWARD_NODE = re.compile(r"Backward\d*::apply|autograd::generated::\w+")
TORCH_DIR_MARK = os.sep + "torch" + os.sep
MARKER_FUNCTION = "_mark_measured_steps"


def is_python(frame):
    return frame.get("filename", "").endswith(".py")


def workspace_frame(frames):
    """The frame that makes this block a cuDNN/cuBLAS workspace, or None. Frames go innermost first."""
    for f in frames:
        if is_python(f):
            return None
        name = f.get("name", "")
        if WORKSPACE_NAME.search(name):
            return f
        if TENSOR_FRAME.search(name):
            return None
        if LIBRARY_FRAME.search(name):
            return f
    return None


def meaningful_python(frame):
    """A model's or optimizer's frame, not torch's plumbing (nn.Module's __call__, autograd's backward, ...)."""
    path = frame["filename"]
    if TORCH_DIR_MARK not in path:
        return True
    return (TORCH_DIR_MARK + "optim" + os.sep) in path


def frame_label(f):
    if is_python(f):
        return f"{os.path.basename(f['filename'])}:{f.get('line', '?')} {f.get('name', '?')}"
    return f.get("name", "?")[:160]


def top_frame(frames):
    """Who made a block: a workspace's library frame, else the innermost model/optimizer Python frame, else the
    autograd node (backward runs on autograd's own thread, which has no Python frames), else a note."""
    ws = workspace_frame(frames)
    if ws is not None:
        return "workspace: " + frame_label(ws)
    for f in frames:
        if is_python(f) and meaningful_python(f):
            return frame_label(f)
    for f in frames:
        if not is_python(f) and BACKWARD_NODE.search(f.get("name", "")):
            return "autograd: " + frame_label(f)
    if not frames:
        return "(no stack: allocated before recording began)"
    return "(no model frame) " + frame_label(frames[0])


def short_stack(frames, limit=14):
    """The frames worth reading: Python frames and C++ frames outside the allocator's and the dispatcher's own."""
    plumbing = re.compile(r"c10::cuda::CUDACachingAllocator|c10::Dispatcher|c10::impl::|c10::BoxedKernel|"
                          r"torch::autograd::VariableType|at::_ops::|wrap_kernel_functor|std::|\?\?|_PyEval|PyObject")
    kept = [f for f in frames if is_python(f) or not plumbing.search(f.get("name", "") + f.get("filename", ""))]
    return [frame_label(f) for f in kept[:limit]]


def _live_at_end(snapshot, device):
    live = {}
    for seg in snapshot.get("segments", []):
        if seg.get("device", device) != device:
            continue
        addr = seg["address"]
        for b in seg.get("blocks", []):
            if b.get("state") == "active_allocated":
                live[addr] = (b["size"], b.get("frames", []))
            addr += b["size"]
    return live


def history_settings(stacks):
    """The memory history's settings to try in order for --stacks, each (keywords of _record_memory_history,
    label): all, C++ and Python frames (they name the cuDNN/cuBLAS workspaces), else Python's alone; python, Python's
    alone (faster to symbolise); trace, every alloc, free and cudaMalloc with its size but no stack at all (context
    None): the request sequence and each segment's opening request where gathering stacks breaks a step (GPT-2 with
    Hugging Face's checkpointing under Python stacks: autograd's run_backward failed), though then no frame names a
    block or marks the measured steps, so the snapshot's analysis covers the whole trace; none, no history: the
    peaks alone (to tell whether the history is what a failing step trips on)."""
    python = ({"context": "all", "stacks": "python"}, "python")
    return {"all": [({"context": "all", "stacks": "all"}, "all"), python], "python": [python],
            "trace": [({"context": None, "stacks": "python"}, "trace")], "none": []}[stacks]


def segment_openings(events):
    """Every cudaMalloc of the recorded history (from before the first step on, so the warm-up steps' too), in
    order: [the segment's bytes, the request that opened it (bytes), who made that request]. The caching allocator
    records a segment_alloc and then, under the same lock, the alloc it serves. A segment is opened only when no
    cached block fits, so a request a few hundred KiB above a cached segment opens a new one: dlsim's segments
    (`dlsim run --memory-snapshot`) set beside these say which requests differ (issue 29: Inception-v3's cuDNN
    workspaces)."""
    out, waiting = [], []  # waiting: openings whose request is not yet seen
    for e in events:
        if e["action"] == "segment_alloc":
            waiting.append([e["size"], None, "(no request recorded after it)"])
            out.append(waiting[-1])
        elif e["action"] == "alloc" and waiting:
            for w in waiting:
                w[1], w[2] = e["size"], top_frame(e.get("frames", []))
            waiting = []
    return out


def analyse_snapshot(snapshot, device=0, top_n=30):
    """(a) the peak of allocated bytes over the measured steps (the events after the marker) and what is live at it;
    (b) the workspace blocks allocated in those steps."""
    traces = snapshot.get("device_traces", [])
    events = traces[device] if device < len(traces) else []
    start = 0
    for i, e in enumerate(events):
        if e["action"] == "alloc" and any(f.get("name") == MARKER_FUNCTION for f in e.get("frames", [])):
            start = i + 1  # the last marker: the measured steps begin after it
    window = "after marker" if start else "whole trace (marker not found: the ring buffer may have dropped it)"
    # The live set when the window opens: the end state with the window's events undone, newest first.
    live = _live_at_end(snapshot, device)
    for e in reversed(events[start:]):
        if e["action"] == "alloc":
            live.pop(e["addr"], None)
        elif e["action"] == "free_completed":
            live[e["addr"]] = (e["size"], e.get("frames", []))
    total = sum(s for s, _ in live.values())
    peak, peak_at = total, start
    workspaces = []
    for i in range(start, len(events)):
        e = events[i]
        if e["action"] == "alloc":
            total += e["size"]
            if workspace_frame(e.get("frames", [])) is not None:
                workspaces.append(e)
        elif e["action"] == "free_completed":
            total -= e["size"]
        if total > peak:
            peak, peak_at = total, i + 1
    for e in events[start:peak_at]:
        if e["action"] == "alloc":
            live[e["addr"]] = (e["size"], e.get("frames", []))
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
    groups = {}
    for size, frames in live.values():
        g = groups.setdefault(top_frame(frames), [0, 0])
        g[0] += size
        g[1] += 1
    by_frame = [{"frame": k, "bytes": v[0], "blocks": v[1]} for k, v in sorted(groups.items(), key=lambda kv: -kv[1][0])]
    largest = sorted(live.values(), key=lambda sf: -sf[0])[:top_n]
    ws_sizes = [e["size"] for e in workspaces]
    ws_kinds = {}
    for e in workspaces:
        k = frame_label(workspace_frame(e["frames"]))
        ws_kinds[k] = max(ws_kinds.get(k, 0), e["size"])
    return {
        "window": window, "events": len(events) - start,
        "segment_openings": segment_openings(events),
        "peak_allocated_bytes": peak, "live_blocks_at_peak": len(live),
        "workspace_bytes_live_at_peak": sum(s for s, f in live.values() if workspace_frame(f) is not None),
        "live_at_peak_by_frame": by_frame,
        "largest_live_at_peak": [{"bytes": s, "frame": top_frame(f), "stack": short_stack(f)} for s, f in largest],
        "workspaces": {"count": len(ws_sizes), "max_bytes": max(ws_sizes, default=0), "total_bytes": sum(ws_sizes),
                       "max_bytes_by_frame": ws_kinds},
    }


# ---------------------------------------------------------------------------------------------------------------
# One case, in its own process.

def versions(torch, device):
    out = {"torch": torch.__version__, "cuda": torch.version.cuda, "python": sys.version.split()[0],
           "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None}
    try:
        from importlib import metadata
        out["cublas"] = next((metadata.version(p) for p in ("nvidia-cublas-cu12", "nvidia-cublas-cu13", "nvidia-cublas")
                              if _has_dist(metadata, p)), None)
    except ImportError:
        out["cublas"] = None
    for mod in ("torchvision", "transformers"):
        m = sys.modules.get(mod)
        out[mod] = getattr(m, "__version__", None) if m else None
    if device == "cuda":
        p = torch.cuda.get_device_properties(0)
        out["device"] = torch.cuda.get_device_name(0)
        out["device_memory_bytes"] = p.total_memory
        try:
            out["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                           capture_output=True, text=True, timeout=20).stdout.strip() or None
        except (OSError, subprocess.SubprocessError):
            out["driver"] = None
    else:
        out["device"] = "cpu (dry run)"
    return out


def _has_dist(metadata, name):
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        return False


def _mark_measured_steps(torch, device):
    # An allocation the analysis finds by this function's name in its stack: the measured steps start after it.
    torch.empty(512, dtype=torch.uint8, device=device)


def _fill(inputs, torch):
    """The spec's inputs are torch.empty (the tracer never reads them): uninitialised images could hold NaNs."""
    for v in inputs.values():
        if v.is_floating_point():
            v.normal_()


def stats_of(torch):
    s = torch.cuda.memory_stats()
    keys = ["reserved_bytes.all.peak", "allocated_bytes.all.peak", "requested_bytes.all.peak", "active_bytes.all.peak",
            "reserved_bytes.all.current", "allocated_bytes.all.current", "segment.all.peak", "segment.all.current",
            "segment.large_pool.peak", "segment.small_pool.peak", "num_alloc_retries", "num_ooms",
            "num_device_alloc", "num_device_free", "inactive_split_bytes.all.peak"]
    out = {k: s.get(k) for k in keys}
    out["max_memory_reserved"] = torch.cuda.max_memory_reserved()
    out["max_memory_allocated"] = torch.cuda.max_memory_allocated()
    return out


def segment_layout(segments, device=0):
    """The allocator's segments as torch.cuda.memory_snapshot() lists them (no memory history needed), in address
    order: per segment [its bytes, 'large' or 'small', the sizes of its live blocks in address order]. Set beside
    dlsim's own segments (`dlsim run --memory-snapshot`), it says which segment each request opened and where the
    blocks a later step reuses sit: e.g. where the first optimizer step put AdamW's state."""
    out = []
    for seg in sorted((s for s in segments if s.get("device", device) == device), key=lambda s: s["address"]):
        live = [b["size"] for b in seg.get("blocks", []) if b.get("state") == "active_allocated"]
        out.append([seg["total_size"], "small" if seg.get("segment_type") == "small" else "large", live])
    return out


def step_stats(torch):
    """What the allocator holds after a warm-up step: its counters, and its segments with their live blocks."""
    s = torch.cuda.memory_stats()
    out = {k: s.get(k) for k in ("reserved_bytes.all.current", "allocated_bytes.all.current",
                                 "allocated_bytes.all.peak", "num_device_alloc", "segment.all.current")}
    out["segments"] = segment_layout(torch.cuda.memory_snapshot(), torch.cuda.current_device())
    return out


def run_case(c, device, warmup, steps, max_entries):
    """-> the case's result dict. Builds the model on the host (as a user's script does), moves it to the device,
    then runs training_step.run_step exactly as import-torch's recorded step."""
    import gc
    import torch
    from model_specs import build_workload
    from step_trace import find_blocks
    from torch_compat import cast_floating
    from training_step import LossScale, apply_checkpointing, check_precision_supported, make_optimizer, run_step

    result = {"case": c, "name": case_name(c)}
    cuda = device == "cuda"
    check_precision_supported(c["precision"])
    torch.manual_seed(0)
    stacks = None
    if cuda:
        torch.backends.cudnn.benchmark = False  # PyTorch's default: the plan cuDNN's heuristics pick
    settings = history_settings(c.get("stacks", "all")) if cuda else []
    for i, (kwargs, label) in enumerate(settings):
        try:
            torch.cuda.memory._record_memory_history(max_entries=max_entries, **kwargs)
            stacks = label
            break
        except (RuntimeError, TypeError):  # a PyTorch without C++ stacks: the next setting, if any
            if i == len(settings) - 1:
                raise
    workload = build_workload(c["spec"], c["batch"], c["seq_len"], c["image_size"])
    model = workload.model.train()
    if c["precision"] == "bf16":
        cast_floating(model, torch.bfloat16)
    model.to(device)
    workload.inputs = {k: v.to(device) for k, v in workload.inputs.items()}
    _fill(workload.inputs, torch)
    ckpt = apply_checkpointing(c["checkpointing"], model, [m for _, m in find_blocks(model)])
    optimizer = make_optimizer(c["optimizer"], [p for p in model.parameters() if p.requires_grad])
    scaler = LossScale(torch.device(device)) if c["precision"] == "mixed-fp16" else None
    result.update(model=workload.name, info=workload.info, checkpointing_settings=ckpt, history_stacks=stacks,
                  parameters=sum(p.numel() for p in model.parameters()))
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    t0 = time.perf_counter()
    # After each warm-up step: what the allocator holds, so that a step's own segments can be told apart (the
    # first step makes the optimizer's state and the cuBLAS workspaces; dlsim's `first_step: lazy` models it), with
    # every segment's size and live blocks (step_stats).
    # The peak of allocated bytes is since the start (no reset here): the first entry's is the first step's own.
    result["warmup_steps"] = []
    for _ in range(warmup):
        run_step(workload, optimizer, c["precision"], scaler)
        if cuda:
            sync()
            result["warmup_steps"].append(step_stats(torch))
    gc.collect()
    sync()
    if cuda:
        result["after_warmup"] = stats_of(torch)
        torch.cuda.reset_peak_memory_stats()
        _mark_measured_steps(torch, device)
    t1 = time.perf_counter()
    for _ in range(steps):
        run_step(workload, optimizer, c["precision"], scaler)
    sync()
    result["step_seconds"] = (time.perf_counter() - t1) / steps
    result["warmup_seconds"] = t1 - t0
    result["measured"] = stats_of(torch) if cuda else None
    result["snapshot"] = None
    if cuda and stacks is not None:
        t2 = time.perf_counter()
        snap = torch.cuda.memory._snapshot()
        torch.cuda.memory._record_memory_history(enabled=None)
        result["snapshot"] = analyse_snapshot(snap, torch.cuda.current_device())
        result["snapshot"]["seconds_to_take_and_analyse"] = round(time.perf_counter() - t2, 2)
        m = result["measured"]
        # The trace's peak should equal the allocator's own counter; a difference means the window or the
        # reconstruction missed events, and the reader should know.
        result["snapshot"]["differs_from_max_memory_allocated_by"] = (result["snapshot"]["peak_allocated_bytes"]
                                                                        - m["max_memory_allocated"])
    result["status"] = "ok"
    result["versions"] = versions(torch, device)
    return result


def child_main(a):
    c = json.loads(a.child)
    try:
        result = run_case(c, a.device, a.warmup, a.steps, a.max_entries)
    except Exception as e:  # noqa: BLE001 - every failure becomes the case's recorded result
        import torch
        oom = isinstance(e, getattr(torch.cuda, "OutOfMemoryError", ())) or "out of memory" in str(e)
        result = {"case": c, "name": case_name(c), "status": "oom" if oom else "error",
                  "error": f"{type(e).__name__}: {str(e)[:2000]}"}
        if a.device == "cuda" and torch.cuda.is_available():
            result["measured"] = stats_of(torch)
    with open(a.child_out, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0


# ---------------------------------------------------------------------------------------------------------------
# The parent: one child per case, the budget, the file, the table.

def write_json(path, doc):
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    os.replace(tmp, path)


def run_child(a, c, timeout):
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [sys.executable, os.path.abspath(__file__), "--child", json.dumps(c), "--child-out", out,
           "--device", a.device, "--warmup", str(a.warmup), "--steps", str(a.steps), "--max-entries", str(a.max_entries)]
    env = dict(os.environ)
    env.setdefault("TORCH_SYMBOLIZE_MODE", "fast")  # symbolising C++ frames by addr2line can take minutes
    env["PYTHONPATH"] = os.pathsep.join([FRONTEND] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        with open(out, encoding="utf-8") as f:
            text = f.read()
        result = json.loads(text) if text else {"case": c, "name": case_name(c), "status": "crashed",
                                                 "returncode": p.returncode, "stderr": p.stderr[-3000:]}
    except subprocess.TimeoutExpired:
        result = {"case": c, "name": case_name(c), "status": "timeout", "timeout_seconds": timeout}
    finally:
        os.unlink(out)
    result["seconds"] = round(time.perf_counter() - t0, 2)
    return result


def mib(x):
    return f"{x / MIB:10.1f}" if isinstance(x, (int, float)) else f"{'-':>10}"


def print_table(results):
    print(f"{'case':58} {'reserved':>10} {'allocated':>10} {'workspace':>10} {'seconds':>8}  status")
    for r in results:
        m = r.get("measured") or {}
        ws = (r.get("snapshot") or {}).get("workspaces", {}).get("max_bytes")
        print(f"{r['name'][:58]:58} {mib(m.get('max_memory_reserved'))} {mib(m.get('max_memory_allocated'))} "
              f"{mib(ws)} {r.get('seconds', 0):8.1f}  {r['status']}")
    print("(MiB; reserved/allocated: torch.cuda.max_memory_*; workspace: the largest cuDNN/cuBLAS workspace block)")


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", help="the JSON file to write (rewritten after each case)")
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    p.add_argument("--dry-run", action="store_true", help="with --device cpu: one case, tiny, CUDA fields null")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--max-seconds", type=float, default=200.0, help="cases not started by then are skipped")
    p.add_argument("--case-timeout", type=float, default=120.0, help="seconds one case's process may run")
    p.add_argument("--max-entries", type=int, default=1_000_000, help="the memory history's ring buffer")
    p.add_argument("--spec", help="run this one case instead of the default list")
    p.add_argument("--batch", type=int, default=0)
    p.add_argument("--seq-len", type=int, default=0)
    p.add_argument("--image-size", type=int, default=0)
    p.add_argument("--precision", default="fp32", choices=PRECISIONS)
    p.add_argument("--optimizer", default="sgd-momentum", choices=OPTIMIZERS)
    p.add_argument("--checkpointing", default="none", choices=CHECKPOINTING)
    p.add_argument("--stacks", default="all", choices=["all", "python", "trace", "none"],
                   help="the memory history's stacks: all (C++ frames name the workspaces), python (faster), trace "
                        "(the history without stacks: every request's size and order) or none (no history: the "
                        "peaks alone, no snapshot)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--child-out", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child is None:
        if not a.out:
            p.error("--out is required")
        if a.device == "cpu" and not a.dry_run:
            p.error("--device cpu measures nothing (no caching allocator): it is only for --dry-run")
        if a.dry_run and a.device != "cpu":
            p.error("--dry-run runs on the CPU: add --device cpu")
        if a.spec and a.batch < 1:
            p.error("--spec needs --batch (at least 1)")
        if a.warmup < 1 or a.steps < 1:
            p.error("--warmup and --steps must be at least 1")
    return a


def main(argv):
    a = parse(argv)
    if a.child is not None:
        return child_main(a)
    try:
        import torch
    except ImportError:
        print(f"torch_memory_truth: {sys.executable} has no torch", file=sys.stderr)
        return 3
    if a.device == "cuda" and not torch.cuda.is_available():
        print("torch_memory_truth: NO GPU: torch sees no CUDA device, so there is nothing to measure and no result "
              "is written (only `--device cpu --dry-run` runs without one)", file=sys.stderr)
        return 3
    if a.spec:
        cases = [case(a.spec, a.batch, a.seq_len, a.image_size, a.precision, a.optimizer, a.checkpointing)]
    else:
        cases = [DRY_RUN_CASE] if a.dry_run else DEFAULT_CASES
    cases = [dict(c, stacks=a.stacks) if a.stacks != "all" else c for c in cases]
    doc = {"meta": {"script": "validate/torch/torch_memory_truth.py", "argv": sys.argv,
                    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                    "device": a.device, "dry_run": a.dry_run, "warmup_steps": a.warmup, "measured_steps": a.steps,
                    "versions": None},
           "cases": []}
    started = time.perf_counter()
    for c in cases:
        left = a.max_seconds - (time.perf_counter() - started)
        if left <= 0:
            doc["cases"].append({"case": c, "name": case_name(c), "status": "skipped (--max-seconds)"})
        else:
            print(f"torch_memory_truth: {case_name(c)} ...", flush=True)
            r = run_child(a, c, min(a.case_timeout, max(left, 30.0)))
            if doc["meta"]["versions"] is None and r.get("versions"):
                doc["meta"]["versions"] = r["versions"]
            r.pop("versions", None)
            doc["cases"].append(r)
            print(f"  {r['status']} in {r['seconds']} s" + (f": {r.get('error', '')[:300]}" if r["status"] != "ok" else ""),
                  flush=True)
        write_json(a.out, doc)
    print_table(doc["cases"])
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
