#!/usr/bin/env python3
"""Writes the shipped H200 and H100 hardware files from PyTorch-level data (issue 28, item 5), byte for byte the
same on every run from the same data and binary:

  validate/torch/ship_hw_files.py [--dlsim build/bin/dlsim]

(rerun it and `git diff configs/hw` shows nothing when the files are current). Needs DLSIM_PYTHON
naming a Python with PyTorch 2.x and torchvision: the H100's EfficientNet-B0 trace is matched against the step
`dlsim import-torch` records.

The chain, per GPU (configs/hw/README.md):
- `h200-fitted.yaml` / `h100-sxm-fitted.yaml`: the datasheet file with the kernel model `dlsim fit-kernels` fits to
  the H200's PyTorch sweeps (SWEEPS below: results/fidelity/h200-2026-11-27-kernels.json and session 12's grouped /
  depthwise and seed-7 random sweeps, CUDA events around each call, the CNNs' layers and random shapes; and
  h200-2026-11-28b/ and -28c/kernels-graph-llm.json, graph-timed, Qwen2.5-0.5B's and GPT-2's GEMMs forward, dgrad
  and wgrad in fp32, TF32 and bf16, attention and the memory-bound ops; -28c/kernels-vit-sdpa.json, ViT-B/16's fp32
  attention kernels from its profiler trace) and the
  GPU's own torch.profiler traces of whole training steps (every lease trace whose ops match dlsim's graph: the
  H200's eleven CNNs, twelve of the H100's thirteen; ShuffleNet V2's does not match), with the GPU's idle time per
  kernel in the CUDA-graph replays of those models added to each trace sample (--gap-us). The sweep's dispatch gets
  a term of its own, so the classes' fixed costs are the device's and no fixed cost per kernel is fitted on top
  (docs/real-gpu.md). On the H100 the sweep is the H200's carried over by the H100's datasheet peaks and bandwidth
  (the same GH100 die): its device times come from the H200 sweep and the H100's own traces, nothing from dlsim's
  harness.
- `h200.yaml` / `h100-sxm.yaml` (what `hw: h200` and `hw: h100-sxm` give): the fitted file (`base:`) with PyTorch
  2.11's eager host fitted on the lease machines' profiles (validate/torch/fit_host_model.py's fit, on every
  profiled CNN of every machine of HOST_PROFILES below, each machine's steps its own cases), and what was measured that is not op time: on the H100, dlsim's harness's micro-benchmarks and
  plans on a real H100 (PCIe copies, cudaMalloc/cudaFree, the launch and concurrency constants, cuDNN's workspaces:
  copied from `h100-sxm-harness.yaml`, the harness-calibrated file, with where each comes from); on the H200, the
  H100's concurrency constants (same die) and its own copy slowdown (in the datasheet file); on both, cuDNN's
  scratch per convolution measured through PyTorch's allocator (`conv_scratch`, CONV_SCRATCH_PROBES below: the
  H100 takes the H200's two-gradient records).
The trace files are unzipped, and their experiments written, under build/ship-hw/ (their names are in the fitted
files' comments, so they are fixed, not temporary).
"""
import argparse
import gzip
import json
import os
import pathlib
import subprocess
import sys
import textwrap

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import conv_scratch_yaml  # noqa: E402  (the probes' records as a conv_scratch list)
import fit_host_model as host  # noqa: E402  (the host model's fit, shared)
import step_fidelity  # noqa: E402  (the replay's idle time per kernel; traces that do not match)

# The sweeps the kernel model is fitted to, each timed as its meta says: CUDA events around one call (the host's
# dispatch held in a short kernel's time; the fit gives it a term of its own, kernel_fit.h), or CUDA-graph replays
# (the device alone). Event-timed: the shared 2026-11-27 sweep (the CNNs' layers and random shapes), and session
# 12's every grouped and depthwise convolution of seven recorded steps (fp32 NHWC depthwise among them: the
# cudnn_depthwise classes, ConvNeXt-T's 7x7 weight gradients the cudnn_depthwise_grouped one, hw/fitted/
# conv_backend.h; its fp32 NCHW grouped records are left out by the fit, their time holding cuDNN's transposes) and
# its seeded random shapes (seed 7). Graph-timed: the LLMs' GEMMs, attention and memory-bound ops, 2026-11-28b
# and again (GPT-2's shapes added) 2026-11-28c. results/fidelity/kernels.md has their k-fold errors.
C = "results/fidelity/data/h200-2026-11-28c"
EVENT_SWEEPS = ["results/fidelity/h200-2026-11-27-kernels.json", f"{C}/kernels-grouped.json",
                f"{C}/kernels-random-seed7.json"]
GRAPH_SWEEPS = [str(step_fidelity.LLM_SWEEP.relative_to(ROOT)), f"{C}/kernels-graph-llm.json"]
# Trace-timed (the kernels' own durations in a profiler trace): ViT-B/16's fp32 attention, the memory-efficient
# kernels' only measured shape (vit_sdpa_records.py; the sdpa_*.tf32 classes). Last, so that the records before
# it keep their places (llm_kernel_fidelity.py counts them).
TRACE_SWEEPS = [str(step_fidelity.VIT_SDPA_SWEEP.relative_to(ROOT))]
SWEEPS = EVENT_SWEEPS + GRAPH_SWEEPS + TRACE_SWEEPS
WORK = "build/ship-hw"
HW = ROOT / "configs" / "hw"

# The top-level keys of h100-sxm-harness.yaml that are not op time, kept in h100-sxm.yaml, with where each comes
# from. Its kernel_times and roofline.op_class_scale (the harness's op times) are not taken.
HARNESS_KEYS = [
    ("memory", "nvidia-smi's total on the H100 the harness ran on; the context reserve is the datasheet file's [A]"),
    ("pcie", "the harness's copy micro-benchmarks on a real H100 (micro.json, results/validation/h100-sxm/)"),
    ("launch_overhead_us", "the harness's empty-kernel launch loop (micro.json): a C++ launch, which the host "
                           "charges for what host_cpu.pytorch_eager does not price (a command other than a kernel "
                           "launch) and the concurrency policies' schedule estimates per launch"),
    ("concurrent_kernels", "dlsim calibrate on the harness's concurrent-convolution runs (micro.json); the rest "
                           "assumptions [A] (configs/hw/README.md)"),
    ("cudamalloc", "the harness's cudaMalloc micro-benchmark (micro.json)"),
    ("cudafree", "the harness's cudaFree micro-benchmark (micro.json)"),
    ("conv_workspace", "cuDNN's workspace per convolution as the harness ran it on the H100: the first choice of "
                       "cuDNN's heuristics, any workspace allowed (`dlsim-cuda --workspace any`), as PyTorch 2.x "
                       "picks with cudnn.benchmark off where the workspace can be allocated; memory, no time. "
                       "Checked against PyTorch's own on an H100 (conv_workspace_probe.py, "
                       "results/fidelity/data/h100-2026-11-27c/conv-workspace.json, fp32, the 321 batch-32 entries "
                       "both have): data gradients agree (103 of 105 within 10 % or 1 MiB, sums 2,848 and 2,871 MiB), "
                       "forward and filter gradients mostly (80 of 108 and 95 of 108; the harness's sums 27 % and 15 % "
                       "larger)"),
]

MACHINES = [  # (label, datasheet file, fitted file, shipped file, text the shipped file adds); profiles: HOST_PROFILES
    ("h200", "h200-datasheet", "h200-fitted", "h200", None),
    ("h100", "h100-sxm-datasheet", "h100-sxm-fitted", "h100-sxm", "harness"),
]
# The kernel model learns from every lease of the GPU (the kernels are the GPU's, whichever machine hosts it). The
# host is the CPU's, and a user's machine is none of ours: four H200 machines ran the same aten ops at per-call
# costs up to 1.6 times apart, and one ran the same eager step 41 % slower ten minutes later (results/fidelity/host.md,
# "Four H200 machines"). On a machine it never saw, a host fitted on one machine missed by 7-16 % (eager MAPE, the
# host's error alone), one fitted on the three others by 6-12 %: the H200's host is fitted on every machine's profiles
# pooled (the issue's own, 2026-11-27b, 2026-11-28b, 2026-11-28c); the H100's on the one H100 machine measured.
HOST_PROFILES = {
    "h200": {"issue": ["h200-2026-11-27-pytorch-step-profiles.json"],
             "27b": ["h200-2026-11-27b/step-profiles.json"],
             "28b": ["h200-2026-11-28b/step-profiles.json"],
             "28c": ["h200-2026-11-28c/step-profiles.json", "h200-2026-11-28c/step-profiles-eleven.json"]},
    "h100": {"27c": ["h100-2026-11-27c/step-profiles.json"]},
}
KERNEL_TRACE_PROFILES = {
    "h200": ["h200-2026-11-27b/step-profiles.json", "h200-2026-11-28b/step-profiles.json"],
    "h100": ["h100-2026-11-27c/step-profiles.json"],
}
DESCRIPTIONS = {
    "h200-fitted": "NVIDIA H200 SXM 141GB HBM3e, PCIe Gen5 x16 host link; kernel times fitted to a PyTorch sweep on "
                   "it and to its PyTorch training steps' profiler traces, the rest datasheet figures and assumptions",
    "h100-sxm-fitted": "NVIDIA H100 SXM5 80GB HBM3, PCIe Gen5 x16 host link; kernel times fitted to the H200's PyTorch "
                       "sweep (same die, carried over by the datasheet) and to the H100's PyTorch training steps' "
                       "profiler traces, the rest datasheet figures and assumptions",
}


def top_level_block(text, key, path):
    """The lines of `text`'s top-level `key:` entry (its indented lines with it), without the comments above it."""
    lines = text.splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(f"{key}:")), None)
    if start is None:
        raise SystemExit(f"ship_hw_files: {path}: no top-level '{key}:'")
    end = start + 1
    while end < len(lines) and (lines[end].startswith((" ", "\t")) or lines[end] == ""):
        end += 1
    while lines[end - 1] == "":
        end -= 1
    return lines[start:end]


# cuDNN's scratch per convolution measured through PyTorch's allocator, fp32 (TF32 on), per GPU: the one-gradient
# probe at batch 32, then the two-gradient probe at the measured steps' batches, whose records replace the first's of
# the same pass, batch and geometry (results/fidelity/memory.md, "dlsim with the measured scratch", sets both beside
# the measured peaks). The H100 was probed with one gradient only; the H200's two-gradient records are carried over
# to it: the same GH100 die and cuDNN 9.19, and where both GPUs were measured they agree to the byte (the two
# one-gradient probes' 648 fp32 records, and the eleven CNN steps' max_memory_reserved and max_memory_allocated).
CONV_SCRATCH_PROBES = {
    "h200": ["results/fidelity/data/h200-2026-11-27b/conv-workspace.json",
             "results/fidelity/data/h200-2026-11-28b/conv-workspace-bwd.json"],
    "h100": ["results/fidelity/data/h100-2026-11-27c/conv-workspace.json",
             "results/fidelity/data/h200-2026-11-28b/conv-workspace-bwd.json"],
}
CONV_SCRATCH_SOURCES = {
    "h200": ("measured through PyTorch 2.11's caching allocator on the lent H200 (validate/torch/conv_workspace_probe.py, "
             "cuDNN's heuristics, cudnn.benchmark off; fp32 NCHW, TF32 on): the 2026-11-27 probe's one-gradient calls "
             "at batch 32 and the 2026-11-28 probe's forward and two-gradient calls at the measured steps' batches"),
    "h100": ("measured through PyTorch 2.11's caching allocator (validate/torch/conv_workspace_probe.py, cuDNN's "
             "heuristics, cudnn.benchmark off; fp32 NCHW, TF32 on): the lent H100's own one-gradient calls at batch 32 "
             "(2026-11-27) and the lent H200's forward and two-gradient calls at the measured steps' batches "
             "(2026-11-28)"),
}
# Why another GPU's records serve this one.
CONV_SCRATCH_CARRIED = {
    "h100": ("The H200's records are carried over: the same GH100 die (132 SMs, sm_90) and cuDNN 9.19.0, and where "
             "both GPUs were measured they agree to the byte (the one-gradient probes' 648 fp32 records; the eleven "
             "torchvision CNN steps' max_memory_reserved and max_memory_allocated)."),
}


def conv_scratch_text(label):
    """The GPU's measured cuDNN scratch as a `conv_scratch:` list, with where it comes from."""
    probes = CONV_SCRATCH_PROBES[label]
    probe = conv_scratch_yaml.merge([json.loads((ROOT / p).read_text()) for p in probes])
    head = (f"cuDNN's scratch per convolution, {CONV_SCRATCH_SOURCES[label]} (" + ", ".join(probes) + "); "
            "results/fidelity/memory.md sets dlsim with it beside the measured peaks." +
            (" " + CONV_SCRATCH_CARRIED[label] if label in CONV_SCRATCH_CARRIED else ""))
    lines = textwrap.wrap(head, 114, initial_indent="# ", subsequent_indent="# ", break_on_hyphens=False)
    return "\n".join(lines) + "\n" + conv_scratch_yaml.to_yaml(probe, {"float32"})


def harness_text():
    path = HW / "h100-sxm-harness.yaml"
    text = path.read_text()
    out = ["# Measured by dlsim's harness (dlsim-cuda) on a real H100, 2026-11-23, and not op time: copied from",
           "# h100-sxm-harness.yaml (results/validation/calibrate_h100.sh). Each block's source:"]
    for key, source in HARNESS_KEYS:
        out += textwrap.wrap(f"{key}: {source}.", 114, initial_indent="# ", subsequent_indent="# ")
        out += top_level_block(text, key, path)
    return "\n".join(out) + "\n"


def write_traces(dlsim, label, trace_profiles, datasheet):
    """`--trace T --experiment E` for each matching trace of `trace_profiles` ({case: profile file}; root-relative
    paths under WORK), the traces unzipped there."""
    work = ROOT / WORK / label
    work.mkdir(parents=True, exist_ok=True)
    args = []
    for n in step_fidelity.traced(list(trace_profiles)):
        trace, exp = work / f"{n}.trace.json", work / f"{n}.experiment.yaml"
        data = gzip.decompress(host.lease_trace(trace_profiles[n], n))
        if not trace.exists() or trace.read_bytes() != data:
            trace.write_bytes(data)
        model, batch = host.CASES[n]
        exp.write_text(json.dumps(host.step_experiment(dlsim.model(model, batch), batch, datasheet, "eager")) + "\n")
        args += ["--trace", str(trace.relative_to(ROOT)), "--experiment", str(exp.relative_to(ROOT))]
    return args


def fit_kernels(dlsim, label, datasheet, fitted, sweeps=SWEEPS, out=None):
    """`dlsim fit-kernels` on the sweeps and the matching traces of every lease of the GPU (KERNEL_TRACE_PROFILES,
    the replays' idle time per kernel from the same models), writing configs/hw/FITTED.yaml (or `out`,
    root-relative: llm_kernel_fidelity.py's fit without the LLM sweep)."""
    traced_profiles, where = {}, {}
    for f in KERNEL_TRACE_PROFILES[label]:
        for n, p in host.load_profiles(host.DATA / f).items():
            if n in traced_profiles:
                raise SystemExit(f"ship_hw_files: {n} is profiled on two leases ({where[n]}, {f})")
            traced_profiles[n], where[n] = p, f
    gap = step_fidelity.replay_gap_us(traced_profiles, list(traced_profiles))
    (ROOT / WORK).mkdir(parents=True, exist_ok=True)
    cmd = [dlsim.binary, "fit-kernels", *sweeps, "--hw", datasheet, "--out", out or f"configs/hw/{fitted}.yaml",
           "--description", DESCRIPTIONS[fitted]] + \
        write_traces(dlsim, label, where, datasheet) + ["--gap-us", f"{gap:.3f}"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"ship_hw_files: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    sys.stdout.write(r.stdout)


def shipped_text(label, fitted, profiles, names, extra, s, costs):
    device = profiles[names[0]]["device"]
    files = [f for group in HOST_PROFILES[label].values() for f in group]
    where = ("the lease machine's CPU" if len(HOST_PROFILES[label]) == 1 else
             f"{len(HOST_PROFILES[label])} lease machines' CPUs pooled")
    head = (f"{device} as PyTorch 2.11 runs it (issue 28): {fitted}.yaml (base:), whose kernel model is fitted to "
            f"PyTorch-level data, and PyTorch 2.11's eager host on {where}, fitted to results/fidelity/data/"
            f"{', '.join(files)} ({len(names)} model steps; scale {s:.4f} on the profiled per-call "
            "costs; results/fidelity/host.md has the fit and its leave-one-out errors). Written by "
            "validate/torch/ship_hw_files.py; results/fidelity.md sets its step times beside PyTorch's.")
    text = ("\n".join(textwrap.wrap(head, 114, initial_indent="# ", subsequent_indent="# ")) + "\n"
            f"base: {fitted}\n"
            f"description: {device}, kernel times and PyTorch 2.11 eager host fitted to PyTorch on the "
            f"{label.upper()} lease{'s' if len(HOST_PROFILES[label]) > 1 else ''} (base {fitted})\n")
    if extra == "harness":
        text += harness_text()
    text += "host_cpu:\n" + host.section_yaml(costs)
    if extra != "harness":
        text += host.SAME_DIE_CONCURRENCY
    text += conv_scratch_text(label)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlsim", default=str(ROOT / "build" / "bin" / "dlsim"))
    a = ap.parse_args()
    if not os.access(a.dlsim, os.X_OK):
        print(f"ship_hw_files: {a.dlsim}: no dlsim binary (scripts/build.sh, or --dlsim PATH)", file=sys.stderr)
        return 2
    (ROOT / WORK).mkdir(parents=True, exist_ok=True)
    dlsim = host.Dlsim(os.path.abspath(a.dlsim), ROOT / WORK)
    for label, datasheet, fitted, shipped, extra in MACHINES:
        fit_kernels(dlsim, label, datasheet, fitted)
        profiles = host.machine_cases(HOST_PROFILES[label])
        names = list(profiles)
        # The host is fitted over the file as it ships (its base and the harness's constants), as
        # fit_host_model.py --write fits it; the fitted kernel model's fixed costs are the device's, so no fixed cost
        # per kernel is fitted first (with_device_fixed says None).
        base = dlsim.tmp / f"{shipped}-without-host.yaml"
        base.write_text(f"base: {HW / fitted}.yaml\n" + (harness_text() if extra == "harness" else ""))
        base_hw, fixed = host.with_device_fixed(dlsim, str(base), profiles, names)
        if fixed is not None:
            raise SystemExit(f"ship_hw_files: {fitted}.yaml holds the dispatch in its fixed costs (fit with --trace)")
        _, s, costs = host.fit(dlsim, str(base_hw), profiles, names)
        (HW / f"{shipped}.yaml").write_text(shipped_text(label, fitted, profiles, names, extra, s, costs))
        print(f"wrote configs/hw/{fitted}.yaml, configs/hw/{shipped}.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
