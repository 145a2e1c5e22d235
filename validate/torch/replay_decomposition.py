#!/usr/bin/env python3
"""What a measured CUDA-graph replay is made of, and which kernel classes carry dlsim's error on a model it was not
fitted on (issue 28), written into results/fidelity/decomposition.md.

  validate/torch/replay_decomposition.py [--dlsim build/bin/dlsim] [--report results/fidelity/decomposition.md]

Input: the lent GPUs' step profiles and profiler traces (results/fidelity/data/h200-2026-11-27b/,
h100-2026-11-27c/: torch_step_profile.py, two profiled eager steps per model, each kernel's CUPTI duration).
1. The replay against its kernels: per model, the replay's time, the profiled steps' kernel time
   (gpu_busy_ms_per_iteration: CUPTI's durations summed), the kernels per step, and what is left per kernel, the
   GPU's idle time between kernels of a replay (it assumes a kernel takes as long in the eager step as in the
   replay; both are the device alone).
2. Per held-out model M and kernel class: the traced kernel time of M's matched ops against what dlsim's
   leave-one-model-out files predict for the same ops (step_fidelity.py's two: *sweep*, the kernel model fitted to
   the sweep less M's records plus one device fixed cost per kernel fitted to the other models' replays; *sweep +
   traces*, the sweep and the other models' traces fitted together). Read from `dlsim calibrate --torch-profile`
   on M's trace, whose report sums measured and predicted kernel time per class over the matched ops (the hardware
   file it writes is not used). Kernels under ops that matched nothing (or outside the steps) are the rest.
"""
import json
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import step_fidelity as sf  # noqa: E402

MACHINES = [("h200", "h200-2026-11-27b/step-profiles.json", "h200-datasheet"),
            ("h100", "h100-2026-11-27c/step-profiles.json", "h100-sxm-datasheet")]
LINE = re.compile(r"^\s+(?:kernel_model class (\S+)|roofline\.op_class_scale\.(\S+)): (\d+) ops, measured ([\d.]+) us "
                  r"against ([\d.]+) us predicted")


def replay_table(profiles):
    rows = ["| model | replay ms | kernels' time ms (CUPTI) | share of the replay | kernels per step | "
            "idle µs per kernel | mean kernel µs |", "|---|---:|---:|---:|---:|---:|---:|"]
    for n, p in profiles.items():
        rep, busy, k = p["graph_replay_ms_median"], p["gpu_busy_ms_per_iteration"], p["kernels_per_iteration"]
        rows.append(f"| {n} | {rep:.2f} | {busy:.2f} | {100 * busy / rep:.1f} % | {k:.0f} | "
                    f"{1000 * (rep - busy) / k:.2f} | {1000 * busy / k:.1f} |")
    names = list(profiles)
    rows += ["", f"Over the {len(names)} models: idle {sf.replay_gap_us(profiles, names):.2f} µs per kernel "
             "(the replays' time less their kernels', over their kernels)."]
    return rows


def classes(dlsim, tmp, hw, trace_args, steps):
    """{class: (ops, measured ms per step, predicted ms per step)} of `dlsim calibrate --torch-profile` on one trace."""
    out = tmp / "decomposition-cal.yaml"
    # trace_args alternates --trace T --experiment E: calibrate takes the traces, then --experiment's files.
    traces = trace_args[1::4]
    exps = trace_args[3::4]
    cmd = [dlsim.binary, "calibrate", "--torch-profile"] + traces + ["--experiment"] + exps + \
        ["--hw", str(hw), "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"replay_decomposition: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    got = {}
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            got[m.group(1) or m.group(2)] = (int(m.group(3)) // steps, float(m.group(4)) / 1000 / steps,
                                             float(m.group(5)) / 1000 / steps)
    return got


def model_files(dlsim, tmp, datasheet, held, profiles, trace_dir):
    """The two leave-one-model-out hardware files step_fidelity.py runs M on (host sections left out: the device
    alone is compared here)."""
    others = [n for n in profiles if n != held]
    kernels_hw, _ = sf.fit_kernels(dlsim, tmp, datasheet, held)
    sweep, _ = host.with_device_fixed(dlsim, str(kernels_hw), profiles, others)
    traced, _ = sf.fit_kernels(dlsim, tmp, datasheet, held, traces=(trace_dir, profiles, others))
    return sweep, traced


def machine(dlsim, tmp, label, profile_file, datasheet):
    profiles = host.load_profiles(host.DATA / profile_file)
    trace_dir = (host.DATA / profile_file).parent / "traces"
    out = [f"### {label.upper()}: the replay against its kernels", ""] + replay_table(profiles) + [""]
    out += [f"### {label.upper()}: kernel time per class, each model left out", "",
            "ms per step: the held-out model's traced kernels (two profiled steps, averaged) against the two "
            "leave-one-out files' predictions for the same matched ops; the error in brackets. *rest*: the traced "
            "kernels of ops that matched none of dlsim's (and dlsim's predicted time for the matched ops is all it "
            "has for them: nothing stands against it). The classes are listed by the sweep file's absolute error, "
            "largest first; classes under 0.2 ms of error in both files are summed in *others*.", ""]
    for held in sf.traced(profiles):
        p = profiles[held]
        steps = int(p.get("profiled_iterations", 2))
        sweep_hw, traced_hw = model_files(dlsim, tmp, datasheet, held, profiles, trace_dir)
        args = sf.trace_args(dlsim, tmp, trace_dir, [held], datasheet)
        a = classes(dlsim, tmp, sweep_hw, args, steps)
        b = classes(dlsim, tmp, traced_hw, args, steps)
        measured = sum(v[1] for v in a.values())
        busy = p["gpu_busy_ms_per_iteration"]
        out += [f"**{held}**: replay {p['graph_replay_ms_median']:.2f} ms, kernels {busy:.2f} ms, of which the "
                f"matched ops' {measured:.2f} ms (rest {busy - measured:.2f} ms)",
                "", "| class | ops | traced ms | sweep | sweep + traces |", "|---|---:|---:|---:|---:|"]
        order = sorted(a, key=lambda c: -abs(a[c][2] - a[c][1]))
        other = [0, 0.0, 0.0, 0.0]
        for c in order:
            ops, meas, pa = a[c]
            pb = b.get(c, (0, 0.0, 0.0))[2]
            if abs(pa - meas) < 0.2 and abs(pb - meas) < 0.2:
                other = [other[0] + ops, other[1] + meas, other[2] + pa, other[3] + pb]
                continue
            out.append(f"| {c} | {ops} | {meas:.2f} | {pa:.2f} ({sf.pct(sf.err(pa, meas))}) | "
                       f"{pb:.2f} ({sf.pct(sf.err(pb, meas))}) |")
        if other[0]:
            out.append(f"| others | {other[0]} | {other[1]:.2f} | {other[2]:.2f} | {other[3]:.2f} |")
        ta, tb = sum(v[2] for v in a.values()), sum(v[2] for v in b.values())
        out += [f"| all matched | | {measured:.2f} | {ta:.2f} ({sf.pct(sf.err(ta, measured))}) | "
                f"{tb:.2f} ({sf.pct(sf.err(tb, measured))}) |", ""]
    return out


def main():
    def generate(_, binary, tmp):
        dlsim = host.Dlsim(binary, tmp)
        return {label: "\n".join(machine(dlsim, tmp, label, *rest)) for label, *rest in MACHINES}
    return host.report_main("replay_decomposition", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())
