#!/usr/bin/env python3
"""Fits PyTorch eager mode's host model (a hardware file's `host_cpu.pytorch_eager:`, hw/eager_host_model.h) to
the training-step profiles measured on the lent GPUs, one machine at a time, and reports its leave-one-model-out
error (docs/host.md describes the model, results/fidelity/host.md the fit).

  validate/torch/fit_host_model.py [--dlsim build/bin/dlsim] [--report results/fidelity/host.md]

Input, per machine: the step profiles this project measured on the lent GPUs (torch_step_profile.py, fp32, SGD
momentum, PyTorch 2.11): results/fidelity/data/h100-2026-11-27c/step-profiles.json (13 torchvision CNNs on an
H100) and h200-2026-11-27b/step-profiles.json (11 on an H200): the eager wall time per step (synchronised), the
CUDA-graph replay time (the device alone) and `host_top_ops`, the host time of each top-level aten op under
torch.profiler.

How a fit on a set of models goes (deterministic: no random numbers, a fixed grid):
0. Where the base file's kernel model was fitted to a sweep timed with CUDA events around each call (its fixed
   costs hold PyTorch's dispatch: kernel_model.fixed_includes_dispatch, docs/real-gpu.md), the device's fixed cost
   per kernel (roofline.kernel_fixed_us) is fitted first, to the models' measured CUDA-graph replays (least
   squared relative error of dlsim's cuda-graph iteration; closed form, the captured step being a line in that
   cost); the file written holds it.
1. Profiled costs per call. Each key of the section takes the profiled host time per call of the aten ops it
   stands for, pooled over the models (total ms over total calls): forward_us.conv <- aten::conv2d, backward_us.norm
   <- aten::cudnn_batch_norm_backward, ... (PROFILED below). The profiler's own overhead inflates these (the
   profiled steps take 1.5-2x the eager wall), and Python's time between the ops (module calls, the engine's
   bookkeeping) is not in them, so they give the shape of the costs, not their size.
2. One scale per machine. dlsim runs each model with those costs (the hardware file with the profiled section) and
   writes a Chrome trace: per op, the host's charge and the kernel's time. The eager step is the max-plus of the
   two along the issue order (the host issues op i after op i-1; the kernel starts when both it is issued and the
   previous kernel is done) from an idle device, as the measured steps were (each followed by a synchronise). The
   device times are dlsim's per-op times scaled so that their sum is the measured graph replay: dlsim's kernel
   model is not yet right on these GPUs (issue 28, items 1-2), and this separates the host's error from the
   device's. The scale s minimises the squared relative error of the predicted eager step over the models, on a
   grid of 0.0005 from 0.05 to 3; the section's values are s times the profiled costs.
Leave-one-model-out: fitted on the other models (steps 0 to 2 from their profiles and eager walls alone),
predicted on the one left out. The fit on all of a machine's models is what the shipped files hold:
validate/torch/ship_hw_files.py writes configs/hw/h100-sxm.yaml and h200.yaml with it, over h100-sxm-fitted and
h200-fitted (kernel models fitted to the sweep and the lease's profiler traces, whose fixed costs are the device's:
step 0 does not apply to them).
"""
import argparse
import gzip
import json
import os
import pathlib
import subprocess
import sys
import tarfile
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
from studies import blocks  # noqa: E402  (generated blocks inside hand-written markdown)
DATA = ROOT / "results" / "fidelity" / "data"
# The committed `dlsim import-torch` recordings of the torchvision CNNs the zoo lacks (their README says how made).
RECORDINGS = DATA / "memory-traces"
# The H200 file takes the concurrent-kernel constants dlsim calibrate fitted on the H100 (the same GH100 die;
# configs/hw/h100-sxm.yaml, from the harness's micro.json): no H200 run fits them, and without them a file has the
# defaults (no co-run slowdown, two GEMM/convolution blocks per SM).
SAME_DIE_CONCURRENCY = """# Concurrent kernels: the H100's fitted values (same GH100 die; configs/hw/h100-sxm.yaml, dlsim calibrate on the
# harness's micro.json there), transferred, not fitted on this GPU: co-running kernels' slowdown, and blocks per SM
# of the GEMM/convolution tiles.
concurrent_kernels:
  gemm_blocks_per_sm: 1
  co_run_slowdown: 0.312
"""
MACHINES = [  # (label, profile file, the hardware file the host is laid over, the shipped file, whether it holds
    # this machine's fit: h200.yaml's host pools four machines, ship_hw_files.HOST_PROFILES)
    ("h100", "h100-2026-11-27c/step-profiles.json", "h100-sxm-fitted", "h100-sxm", True),
    ("h200", "h200-2026-11-27b/step-profiles.json", "h200-fitted", "h200", False),
]
# The zoo's CNNs: a profiled case "NAME-bBATCH" of one of them is simulated as the zoo's graph of NAME at BATCH.
# A torchvision CNN the zoo does not build (EfficientNet-B0, ShuffleNet V2 in the H100 lease) is simulated as the
# step `dlsim import-torch torchvision:NAME --batch BATCH` records (on fake tensors, with the Python of DLSIM_PYTHON:
# PyTorch 2.x and torchvision); Hugging Face cases (no CUDA-graph replay) are left out of these fits. CASES fills as
# profile files are read: (the zoo name or the torchvision spec, batch).
ZOO_CNNS = {"alexnet", "vgg16", "vgg19", "resnet18", "resnet50", "resnet101", "resnet152", "googlenet",
            "inception_v3", "densenet121", "mobilenet_v2", "squeezenet1_1"}
CASES = {}


def load_profiles(path):
    """{case: profile} of a step-profile file (a list of profiles, as the shared data, or torch_step_profile.py's
    {"records": [...]}), the CNNs with a CUDA-graph replay, in the file's order; CASES learns their (model, batch)."""
    data = json.loads(pathlib.Path(path).read_text())
    records = data["records"] if isinstance(data, dict) else data
    out = {}
    for r in records:
        name, _, batch = r["case"].rpartition("-b")
        if not batch.isdigit() or "graph_replay_ms_median" not in r:
            continue
        if name in ZOO_CNNS:
            CASES[r["case"]] = (name, int(batch))
        elif r.get("spec") == f"torchvision:{name}":
            CASES[r["case"]] = (r["spec"], int(batch))
        else:
            continue
        out[r["case"]] = r
    return out
# Held out of every host fit: ViT-B/16 (28c) is the check of a transformer no fit has seen (results/fidelity.md).
NOT_FITTED = {"vit_b_16-b32"}


def machine_cases(machines):
    """The profiles of several machines pooled: {CASE@MACHINE: profile} over `machines` ({machine: [profile files
    relative to DATA]}, in order), each case registered in CASES. A machine's CPU sets its per-op costs, so the
    same model on two machines is two cases; one machine gives its cases as load_profiles does, renamed."""
    out = {}
    for machine, files in machines.items():
        for f in files:
            for case, p in load_profiles(DATA / f).items():
                if case in NOT_FITTED:
                    continue
                CASES[f"{case}@{machine}"] = CASES[case]
                out[f"{case}@{machine}"] = p
    return out


CLASSES = ["conv", "matmul", "norm", "elementwise", "view"]

# Per call: the aten ops whose profiled time a key's per-call cost is pooled from. A backward node that launches a
# second kernel (a convolution's data and weight gradients) has extra_kernel_us taken off, which dlsim charges
# for that kernel. The linear layer's backward node is its two mm, the transposes and the bias's sum; the mean's
# backward (adaptive pooling) an expand and a div; the concatenation's backward four narrows per cat.
PROFILED = {
    "forward_us.conv": ["aten::conv2d"],
    "forward_us.matmul": ["aten::linear"],
    "forward_us.norm": ["aten::batch_norm"],
    "forward_us.elementwise": ["aten::relu_", "aten::hardtanh_", "aten::add", "aten::max_pool2d",
                               "aten::adaptive_avg_pool2d", "aten::cat", "aten::dropout", "aten::cross_entropy_loss"],
    "forward_us.view": ["aten::flatten"],
    "backward_us.conv": ["aten::convolution_backward"],
    "backward_us.norm": ["aten::cudnn_batch_norm_backward"],
    "backward_us.elementwise": ["aten::threshold_backward", "aten::hardtanh_backward",
                                "aten::max_pool2d_with_indices_backward", "aten::native_dropout_backward",
                                "aten::_log_softmax_backward_data"],
    "grad_accumulate_us": ["aten::add_"],
    "param_grad_us": ["aten::detach"],
}


def calls(case, op):
    return next(((n, ms) for name, n, ms in case["host_top_ops"] if name == op), (0, 0.0))


def pooled(cases, ops, fallback=None):
    """Profiled µs per call of `ops` over `cases` (total time over total calls); `fallback` where none is listed
    (a profile lists its 25 costliest top-level ops only)."""
    n = sum(calls(c, op)[0] for c in cases for op in ops)
    ms = sum(calls(c, op)[1] for c in cases for op in ops)
    if n == 0:
        if fallback is None:
            raise SystemExit(f"fit_host_model: no calls of {', '.join(ops)} in the profiles fitted on")
        return fallback
    return 1000.0 * ms / n


def per_step(cases, op, fallback=0.0):
    """Profiled µs per step of `op`, the mean over the cases whose top ops list it."""
    have = [calls(c, op)[1] for c in cases if calls(c, op)[0] > 0]
    return 1000.0 * sum(have) / len(have) if have else fallback


def profiled_costs(cases, others=None):
    """The section's keys at their profiled size (µs), from the profiles of `cases` (step 1 of the module text);
    an op none of them lists takes its cost in the profiles `others`, if given."""
    fb = profiled_costs(others) if others else {}
    b = {key: pooled(cases, ops, fb.get(key)) for key, ops in PROFILED.items()}
    # An extra kernel of a node or a library call: one more dispatched op with its launch and no Python, as the
    # engine's gradient sum (aten::add_) is.
    b["extra_kernel_us"] = b["grad_accumulate_us"]
    b["backward_us.conv"] -= b["extra_kernel_us"]
    # The linear layer's backward node: two mm, the transposes and the bias's sum, per linear layer.
    linears = sum(calls(c, "aten::linear")[0] for c in cases)
    node_ms = sum(calls(c, op)[1] for c in cases for op in ("aten::mm", "aten::t", "aten::sum"))
    b["backward_us.matmul"] = (1000.0 * node_ms / linears - b["extra_kernel_us"] if linears
                               else fb["backward_us.matmul"])
    # Mean (adaptive pooling) and concatenation backward nodes join the elementwise pool.
    n_bwd = sum(calls(c, op)[0] for c in cases for op in PROFILED["backward_us.elementwise"])
    ms_bwd = sum(calls(c, op)[1] for c in cases for op in PROFILED["backward_us.elementwise"])
    for node, ops in (("aten::div", ("aten::div", "aten::expand")), ("aten::cat", ("aten::narrow",))):
        n_bwd += sum(calls(c, node)[0] for c in cases)
        ms_bwd += sum(calls(c, op)[1] for c in cases for op in ops)
    b["backward_us.elementwise"] = 1000.0 * ms_bwd / n_bwd
    # No backward view node runs in these models: priced as a forward view ([A]).
    b["backward_us.view"] = b["forward_us.view"]
    # Once per step: the loss's backward start (its nll_loss_backward takes about a millisecond, the seed gradient
    # ones_like), and the optimizer's in-place foreach calls; per parameter: the out-of-place foreach (weight
    # decay) result.
    start = [("aten::nll_loss_backward", "aten::ones_like"), ("aten::_foreach_add_", "aten::_foreach_mul_")]
    parts = {op: (per_step(others, op) if others else 0.0) for pair in start for op in pair}
    b["backward_start_us"] = sum(per_step(cases, op, parts[op]) for op in start[0])
    b["optimizer_step_us"] = sum(per_step(cases, op, parts[op]) for op in start[1])
    params = sum(calls(c, "aten::detach")[0] for c in cases if calls(c, "aten::_foreach_add")[0])
    b["optimizer_tensor_us"] = (1000.0 * sum(calls(c, "aten::_foreach_add")[1] for c in cases) / params if params
                                else fb["optimizer_tensor_us"])
    return b


KEY_ORDER = [f"forward_us.{c}" for c in CLASSES] + [f"backward_us.{c}" for c in CLASSES] + [
    "extra_kernel_us", "grad_accumulate_us", "param_grad_us", "backward_start_us", "optimizer_step_us",
    "optimizer_tensor_us"]


def section_yaml(costs, indent="  "):
    """The pytorch_eager mapping as YAML text, values rounded to 0.01 µs."""
    lines = [f"{indent}pytorch_eager:"]
    for group in ("forward_us", "backward_us"):
        lines.append(f"{indent}  {group}:")
        lines += [f"{indent}    {c}: {costs[f'{group}.{c}']:.2f}" for c in CLASSES]
    lines += [f"{indent}  {k}: {costs[k]:.2f}" for k in KEY_ORDER if "." not in k]
    return "\n".join(lines) + "\n"


def rounded(costs):
    return {k: round(v, 2) for k, v in costs.items()}


# The measured CNN steps' SGD weight decay (torch_step_profile.py's default, with momentum 0.9, foreach).
MEASURED_WEIGHT_DECAY = 1e-4


def step_experiment(model, batch, hw, launch):
    """The experiment a measured step is compared with: pytorch-caching, no swap, serial, two iterations; eager
    steps synchronised at their end, as the measured ones were (each followed by a synchronise), CUDA-graph
    replays back to back, as they were timed (replays between two events). A zoo model's SGD has the measured
    steps' weight decay (torch.optim's foreach SGD then makes a fourth pass, out of place); a recording (a
    .torchstep.json path) holds the optimizer it was recorded with, without decay, and refuses the key."""
    exp = {"model": model, "batch": batch, "hw": str(hw), "pool": "pytorch-caching", "swap": "none",
           "concurrency": "serial", "iterations": 2, "launch": launch, "sync_every_step": launch == "eager"}
    if ".torchstep.json" not in str(model):
        exp["weight_decay"] = MEASURED_WEIGHT_DECAY
    return exp


def lease_trace(profiles, name):
    """The gzipped profiler trace of case `name` of the lease whose step profiles are `profiles` (a path relative
    to DATA): in the lease's traces/ folder, or in its traces.tar (traces/NAME.json.gz)."""
    lease = (DATA / profiles).parent
    if (lease / "traces").is_dir():
        return (lease / "traces" / f"{name}.json.gz").read_bytes()
    with tarfile.open(lease / "traces.tar") as t:
        return t.extractfile(f"traces/{name}.json.gz").read()


class Dlsim:
    def __init__(self, binary, tmp):
        self.binary, self.tmp, self.n = binary, pathlib.Path(tmp), 0

    def hw_file(self, base_hw, costs=None, device_fixed_us=None):
        """A hardware file over `base_hw`: the host section with `costs`, and the device's fixed cost per kernel."""
        self.n += 1
        p = self.tmp / f"hw{self.n}.yaml"
        text = f"base: {base_hw}\n"
        if device_fixed_us is not None:
            text += device_fixed_yaml(device_fixed_us)
        if costs is not None:
            text += "host_cpu:\n" + section_yaml(costs)
        p.write_text(text)
        return p

    def model(self, model, batch):
        """The experiment's `model:` for a case's model: a zoo name as it is; a torchvision spec as the step
        `dlsim import-torch` recorded it: the committed recording (data/memory-traces/NAME-bB.torchstep.json.gz, so
        that fits and reports regenerate without PyTorch 2.x, byte for byte), else recorded now (once per spec and
        batch, into the temporary directory; DLSIM_PYTHON names a Python with PyTorch 2.x and torchvision)."""
        if not model.startswith("torchvision:"):
            return model
        name = f"{model.split(':', 1)[1]}-b{batch}"
        out = self.tmp / f"{name}.torchstep.json"
        committed = RECORDINGS / f"{name}.torchstep.json.gz"
        if committed.exists():
            if not out.exists() or out.read_bytes() != gzip.decompress(committed.read_bytes()):
                out.write_bytes(gzip.decompress(committed.read_bytes()))
            return str(out)
        if not out.exists():
            cmd = [self.binary, "import-torch", model, "--batch", str(batch), "--out", str(out)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"fit_host_model: {' '.join(cmd)} failed ({r.returncode}; DLSIM_PYTHON names a "
                                 f"Python with PyTorch 2.x and torchvision, or commit the recording as {committed}): "
                                 f"{r.stderr.strip()}")
        return str(out)

    def run(self, model, batch, hw, launch="eager", trace=True):
        """`dlsim run --json` (and, with trace, the last iteration's per-op host charge and kernel time, µs)."""
        self.n += 1
        exp = self.tmp / f"exp{self.n}.yaml"
        exp.write_text(json.dumps(step_experiment(self.model(model, batch), batch, hw, launch)))
        chrome = self.tmp / f"trace{self.n}.json"
        cmd = [self.binary, "run", str(exp), "--json"] + (["--chrome-trace", str(chrome)] if trace else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"fit_host_model: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
        result = json.loads(r.stdout)
        if not trace:
            return result, None
        events = json.loads(chrome.read_text())["traceEvents"]
        last = result["iterations_completed"] - 1
        host = sorted((e["ts"], e["args"]["op"], e["dur"]) for e in events
                      if e.get("cat") == "host" and e["args"]["iteration"] == last)
        kernel = {e["args"]["op"]: e["dur"] for e in events
                  if e.get("ph") == "X" and e.get("tid", -1) >= 0 and e.get("cat") not in ("host", "copy", "iteration")
                  and e["args"]["iteration"] == last}
        return result, [(dur, kernel[op]) for _, op, dur in host]


def eager_step(ops, scale, device_scale):
    """The max-plus of host and device from an idle device: ops are (host µs, kernel µs) in issue order."""
    host = device = 0.0
    for h, d in ops:
        host += scale * h
        device = (host if host > device else device) + device_scale * d
    return device


def fit_scale(ops_by_case, measured):
    """The scale minimising the squared relative error of the predicted eager steps (a fixed grid). A scale whose
    partial sum already reaches the best so far is dropped without its other cases: the terms are squares, so the
    whole sum could not be below it (the answer is the full scan's; thirteen models' scan took half an hour)."""
    best = None
    for i in range(100, 6001):
        s = i * 0.0005
        err = 0
        for (ops, dev), m in zip(ops_by_case, measured):
            err += (eager_step(ops, s, dev) / m - 1) ** 2
            if best is not None and not err < best[1] - 1e-15:
                break
        else:
            best = (s, err)
    return best[0]


def device_scale(ops, replay_ms):
    return 1000.0 * replay_ms / sum(d for _, d in ops)


def device_fixed_yaml(us):
    return f"roofline:\n  kernel_fixed_us: {us:.2f}\n"


def hw_path(hw):
    p = pathlib.Path(hw)
    return p if p.suffix == ".yaml" else ROOT / "configs" / "hw" / f"{hw}.yaml"


def fixed_includes_dispatch(hw):
    """Whether the file, or a base under it, holds a fitted kernel model whose fixed costs hold the host's dispatch
    (kernel_model.fixed_includes_dispatch, docs/real-gpu.md): its kernels' device time then needs a fixed cost."""
    path = hw_path(hw)
    text = path.read_text()
    if "fixed_includes_dispatch: true" in text:
        return True
    base = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("base:")), None)
    if base is None:
        return False
    return fixed_includes_dispatch(base if not base.endswith(".yaml") else path.parent / base)


def fit_device_fixed(dlsim, base_hw, profiles, names):
    """The device's fixed cost per kernel (roofline.kernel_fixed_us, µs; with fixed_includes_dispatch the fitted
    classes' device time takes it in place of their fixed costs) that brings dlsim's cuda-graph iterations of
    `names` closest to their measured replays: least squared relative error, rounded to 0.01 µs as the file holds
    it, within [0, 40]. None where the base's kernel times need none. A serial captured step is its kernels back to
    back, so its time is a line in the fixed cost (each kernel pays it once): two runs per model give the line and
    the least-squares cost is closed-form; a third run at the answer checks the line held (else it says so)."""
    if not fixed_includes_dispatch(base_hw):
        return None

    def graph_us(n, us):
        hw = dlsim.hw_file(base_hw, None, us)
        return dlsim.run(*CASES[n], hw, launch="cuda-graph", trace=False)[0]["iteration_time_us"]

    lines = {}
    for n in names:
        t0, t10 = graph_us(n, 0.0), graph_us(n, 10.0)
        lines[n] = (t0, (t10 - t0) / 10.0, 1000.0 * profiles[n]["graph_replay_ms_median"])
    num = sum((k / m) * (1 - t0 / m) for t0, k, m in lines.values())
    den = sum((k / m) ** 2 for _, k, m in lines.values())
    us = round(min(40.0, max(0.0, num / den if den > 0 else 0.0)), 2)
    n = names[0]
    t0, k, _ = lines[n]
    got = graph_us(n, us)
    if abs(got - (t0 + k * us)) > 1e-3 * got + 1.0:
        raise SystemExit(f"fit_host_model: {n}'s cuda-graph time is not a line in the device's fixed cost "
                         f"({got:.1f} µs at {us} µs, the line says {t0 + k * us:.1f}); fit it by search instead")
    return us


def with_device_fixed(dlsim, base_hw, profiles, names):
    """(the base for the host fit: `base_hw` with the device's fixed cost fitted on `names`, that cost or None)."""
    us = fit_device_fixed(dlsim, base_hw, profiles, names)
    return (base_hw if us is None else dlsim.hw_file(base_hw, None, us)), us


def fit(dlsim, base_hw, profiles, names):
    """Fits on the cases `names`: (profiled costs, scale, fitted costs rounded as the file holds them)."""
    cases = [profiles[n] for n in names]
    b = profiled_costs(cases)
    hw = dlsim.hw_file(base_hw, b)
    data = []
    for n in names:
        _, ops = dlsim.run(*CASES[n], hw)
        data.append((ops, device_scale(ops, profiles[n]["graph_replay_ms_median"])))
    s = fit_scale(data, [1000.0 * profiles[n]["eager_wall_ms_median"] for n in names])
    return b, s, rounded({k: s * v for k, v in b.items()})


def predict(dlsim, base_hw, costs, profile, name):
    """dlsim's host charges with `costs` (as a file holds them): host ms per step and eager step ms."""
    _, ops = dlsim.run(*CASES[name], dlsim.hw_file(base_hw, costs))
    dev = device_scale(ops, profile["graph_replay_ms_median"])
    return sum(h for h, _ in ops) / 1000.0, eager_step(ops, 1.0, dev) / 1000.0


def pct(p, m):
    return f"{100.0 * (p / m - 1):+.1f} %"


def machine_report(dlsim, label, profile_file, base_hw, variant, holds):
    profiles = load_profiles(DATA / profile_file)
    names = list(profiles)
    out = [f"### {label.upper()} machine ({profiles[names[0]]['device']}), `{variant}.yaml` (base: `{base_hw}`)", ""]
    shipped_base = base_hw
    base_hw, d_all = with_device_fixed(dlsim, shipped_base, profiles, names)
    if d_all is not None:
        out += [f"The base's fitted kernel times hold the host's dispatch in their fixed costs, so the device's fixed "
                f"cost per kernel is fitted first, to the measured CUDA-graph replays: `roofline.kernel_fixed_us` = "
                f"{d_all:.2f} µs on all {len(names)} models.", ""]
    b_all, s_all, final = fit(dlsim, base_hw, profiles, names)
    what = ("what the file holds" if holds else f"`{variant}.yaml` holds the fit on four machines' models pooled: "
            "section *Four H200 machines*")
    out += [f"Fitted on all {len(names)} models of this machine ({what}): profiled cost per call, the scale, the "
            "value.", "",
            "| key | profiled µs | fitted µs |", "|---|---:|---:|"]
    out += [f"| `{k}` | {b_all[k]:.2f} | {final[k]:.2f} |" for k in KEY_ORDER]
    out += ["", f"Scale s = {s_all:.4f}: the eager host costs {s_all:.2f} times what the profiler measured per op "
            "(its own overhead out, the Python between ops in).", ""]
    out += ["Leave one model out: fitted on the others, predicted on this one. Device time: the measured graph "
            "replay (dlsim's per-op kernel times scaled to it), not dlsim's kernel model.", "",
            "| model | measured eager ms | graph replay ms | profiled host ms | s | predicted host ms | host vs eager "
            "| predicted eager ms | eager error | eager error, its own profile |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    errs, host_errs, own_errs = [], [], []
    for held in names:
        train = [n for n in names if n != held]
        base_hw, _ = with_device_fixed(dlsim, shipped_base, profiles, train)
        _, s, costs = fit(dlsim, base_hw, profiles, train)
        p = profiles[held]
        host_ms, eager_ms = predict(dlsim, base_hw, costs, p, held)
        # What a user who profiles this model gets (issue 28, item 4): its own per-call costs, the others' scale.
        own = rounded({k: s * v for k, v in profiled_costs([p], [profiles[n] for n in train]).items()})
        _, own_ms = predict(dlsim, base_hw, own, p, held)
        m = p["eager_wall_ms_median"]
        errs.append(abs(eager_ms / m - 1))
        host_errs.append(abs(host_ms / m - 1))
        own_errs.append(abs(own_ms / m - 1))
        prof = sum(ms for _, _, ms in p["host_top_ops"])
        out.append(f"| {held} | {m:.2f} | {p['graph_replay_ms_median']:.2f} | {prof:.2f} | {s:.4f} | {host_ms:.2f} | "
                   f"{pct(host_ms, m)} | {eager_ms:.2f} | {pct(eager_ms, m)} | {pct(own_ms, m)} |")
    out += ["", f"Eager step: MAPE {100 * sum(errs) / len(errs):.1f} %, largest {100 * max(errs):.1f} % "
            f"(with the model's own profile: {100 * sum(own_errs) / len(own_errs):.1f} %, largest "
            f"{100 * max(own_errs):.1f} %). Host time against the eager wall: mean "
            f"{100 * sum(host_errs) / len(host_errs):.1f} % apart (it bounds the host from above; equal only where the "
            "step is host-bound).", ""]
    out += ["In-sample (the values fitted on all of them, on each model), and `dlsim run` end to end with them over "
            "the base (its own kernel "
            "model; eager with `sync_every_step: true`, a synchronised step as measured):", "",
            "| model | predicted host ms | predicted eager ms | error | dlsim eager iteration ms | dlsim host ms | "
            "dlsim device ms | bound | dlsim cuda-graph ms | measured replay ms |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    base_hw = shipped_base if d_all is None else dlsim.hw_file(shipped_base, None, d_all)
    for n in names:
        p = profiles[n]
        host_ms, eager_ms = predict(dlsim, base_hw, final, p, n)
        hw = dlsim.hw_file(base_hw, final)
        run, _ = dlsim.run(*CASES[n], hw, trace=False)
        graph, _ = dlsim.run(*CASES[n], hw, launch="cuda-graph", trace=False)
        out.append(f"| {n} | {host_ms:.2f} | {eager_ms:.2f} | {pct(eager_ms, p['eager_wall_ms_median'])} | "
                   f"{run['iteration_time_us'] / 1000:.2f} | {run['host_time_us'] / 1000:.2f} | "
                   f"{run['device_time_us'] / 1000:.2f} | {run['bound']} | {graph['iteration_time_us'] / 1000:.2f} | "
                   f"{p['graph_replay_ms_median']:.2f} |")
    return out + [""]


def commit():
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return r.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def report_main(script, doc, generate, options=(), provenance=blocks.PROVENANCE):
    """The command line of every fidelity report (fit_host_model.py, step_fidelity.py, profile_fidelity.py,
    memory_fidelity.py, concurrency_fidelity.py): --dlsim (checked before anything runs), --report, and `options`
    ((flag, argparse keywords) pairs); `generate(args, dlsim_binary, tmp_dir)` returns the generated blocks, which
    are printed or written into the report with the command that made them (emit_report). An option whose
    keywords hold `in_command: True` changes what is written, and its value goes into the command. `provenance`:
    the block the command and commit go into (a report that shares its page with another names its own)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--dlsim", default=str(ROOT / "build" / "bin" / "dlsim"))
    ap.add_argument("--report", help="rewrite the generated blocks of this markdown file (made if absent); "
                    "default: print them")
    for flag, kwargs in options:
        ap.add_argument(flag, **{k: v for k, v in kwargs.items() if k != "in_command"})
    a = ap.parse_args()
    if not os.access(a.dlsim, os.X_OK):
        print(f"{script}: {a.dlsim}: no dlsim binary (scripts/build.sh, or --dlsim PATH)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix=f"dlsim-{script.replace('_', '-')}-") as tmp:
        generated = generate(a, os.path.abspath(a.dlsim), pathlib.Path(tmp))
    # The command as it is worth repeating: the flags that change what is written (store_true ones), --report.
    flags = "".join(f" {flag}" for flag, kwargs in options
                    if kwargs.get("action") == "store_true" and getattr(a, flag[2:].replace("-", "_")))
    flags += "".join(f" {flag} {getattr(a, flag[2:].replace('-', '_'))}" for flag, kwargs in options
                     if kwargs.get("in_command"))
    command = f"validate/torch/{script}.py{flags}" + (f" --report {a.report}" if a.report else "")
    return emit_report(generated, command, a.report, provenance)


def main():
    def generate(a, binary, tmp):
        dlsim = Dlsim(binary, tmp)
        return {label: "\n".join(machine_report(dlsim, label, *rest)) for label, *rest in MACHINES}
    return report_main("fit_host_model", __doc__, generate)


def emit_report(generated, command, report, provenance=blocks.PROVENANCE):
    """The generated blocks with their provenance: printed, or written into `report`'s blocks (made if absent).
    Exit status: 0, or 2 where the file's blocks do not match."""
    generated[provenance] = f"Written by `{command}` at commit {commit()}."
    if not report:
        for name, text in generated.items():
            sys.stdout.write(f"<!-- generated: {name} -->\n\n{text}\n\n{blocks.END}\n\n")
        return 0
    path = pathlib.Path(report)
    old = path.read_text() if path.exists() else "\n\n".join(
        f"<!-- generated: {name} -->\n{blocks.END}" for name in generated) + "\n"
    try:
        path.write_text(blocks.replace(old, str(path), generated))
    except blocks.BlockError as e:
        print(f"{pathlib.Path(command.split()[0]).stem}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
