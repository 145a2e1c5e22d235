#!/usr/bin/env python3
"""How well `dlsim calibrate --torch-profile` carries PyTorch's own profile of some models to a model it did not
see, on the GPU the profiles came from (issue 28, item 4), written into results/fidelity/profile.md.

  validate/torch/profile_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity/profile.md]

Input: results/fidelity/data/h200-2026-11-27b/ (torch_step_profile.py on a lent H200): per model, the
torch.profiler trace of two training steps (CPU and CUDA activities, record_shapes) and the step's measured eager
wall time and whole-step CUDA-graph replay. Per held-out model M:
  - shipped: `dlsim run` with `h200.yaml` (its kernel model fitted to the kernel sweep, its host to the step
    profiles: M was in that host fit, so this column is in-sample for the host);
  - profiles of the others: `dlsim calibrate --torch-profile` on every other model's trace (each with its zoo
    experiment), starting from `h200.yaml`; the file it writes runs M;
  - its own profile: the same from M's trace alone (what a user who profiled M gets for M's other settings; here
    it predicts the very step it was fitted on, so it checks the calibration's arithmetic more than it predicts).
Device time is dlsim's `launch: cuda-graph` iteration against the replay; the eager step is `launch: eager` with
`sync_every_step: true` against the synchronised eager wall. Pool pytorch-caching, no swap, serial.
"""
import gzip
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402

DATA = host.DATA / "h200-2026-11-27b"


_made = [0]


def experiment(tmp, model, batch, hw="h200", launch="eager"):
    _made[0] += 1
    path = tmp / f"exp{_made[0]}-{model}-b{batch}-{launch}.yaml"
    path.write_text(json.dumps(host.step_experiment(model, batch, hw, launch)))
    return path


def calibrate(dlsim, tmp, names, label, base):
    out = tmp / f"cal-{label}.yaml"
    cmd = [dlsim, "calibrate", "--torch-profile"] + [str(tmp / f"{n}.json") for n in names] + ["--experiment"]
    cmd += [str(experiment(tmp, *host.CASES[n])) for n in names] + ["--hw", str(base), "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"profile_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return out, r.stdout


def step_ms(dlsim, tmp, name, hw):
    model, batch = host.CASES[name]
    got = []
    for launch in ("cuda-graph", "eager"):
        r = subprocess.run([dlsim, "run", str(experiment(tmp, model, batch, hw, launch)), "--json"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit(f"profile_fidelity: dlsim run {name} on {hw} failed: {r.stderr.strip()}")
        got.append(json.loads(r.stdout)["iteration_time_us"] / 1000.0)
    return got


def pct(p, m):
    return f"{100.0 * (p / m - 1):+.1f} %"


def mape(pairs):
    e = [abs(p / m - 1) for p, m in pairs]
    return f"{100.0 * sum(e) / len(e):.1f} % (largest {100.0 * max(e):.1f} %)"


def graph_sweep_base(dlsim, tmp):
    """The H200 datasheet file with the kernel model fitted to the graph-timed sweep (device time alone, its fixed
    costs the device's: no dispatch in them, so no fitted device fixed cost on top)."""
    out = tmp / "h200-graph-sweep.yaml"
    cmd = [dlsim, "fit-kernels", str(DATA / "kernels-graph.json"), "--hw", "h200-datasheet", "--out", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"profile_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return out


def report(dlsim, tmp, base, base_label, key):
    profiles = host.load_profiles(DATA / "step-profiles.json")
    names = [n for n in profiles if (DATA / "traces" / f"{n}.json.gz").exists()]
    for n in names:
        if not (tmp / f"{n}.json").exists():
            with gzip.open(DATA / "traces" / f"{n}.json.gz", "rb") as src:
                (tmp / f"{n}.json").write_bytes(src.read())
    rows, cols = [], {k: [] for k in ("ship_dev", "lomo_dev", "own_dev", "ship_eager", "lomo_eager", "own_eager")}
    for held in names:
        p = profiles[held]
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        ship = step_ms(dlsim, tmp, held, base)
        lomo_hw, _ = calibrate(dlsim, tmp, [n for n in names if n != held], f"{key}-no-{held}", base)
        lomo = step_ms(dlsim, tmp, held, lomo_hw)
        own_hw, _ = calibrate(dlsim, tmp, [held], f"{key}-own-{held}", base)
        own = step_ms(dlsim, tmp, held, own_hw)
        for key, (dev, eager) in (("ship", ship), ("lomo", lomo), ("own", own)):
            cols[f"{key}_dev"].append((dev, replay))
            cols[f"{key}_eager"].append((eager, wall))
        rows.append(f"| {held} | {replay:.2f} | {ship[0]:.2f} ({pct(ship[0], replay)}) | "
                    f"{lomo[0]:.2f} ({pct(lomo[0], replay)}) | {own[0]:.2f} ({pct(own[0], replay)}) | {wall:.2f} | "
                    f"{ship[1]:.2f} ({pct(ship[1], wall)}) | {lomo[1]:.2f} ({pct(lomo[1], wall)}) | "
                    f"{own[1]:.2f} ({pct(own[1], wall)}) |")
    _, all_report = calibrate(dlsim, tmp, names, f"{key}-all", base)
    classes = [line.strip() for line in all_report.splitlines() if line.strip().startswith("kernel_model class")
               or line.strip().startswith("roofline kind")]
    out = [f"Starting from {base_label}. ms per step on the {profiles[names[0]]['device']}; the error against the "
           "measurement in brackets.", "",
           "| model | replay ms | uncalibrated | profiles of the others | its own profile | eager ms | uncalibrated | "
           "profiles of the others | its own profile |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows
    out += ["", f"Device time MAPE: uncalibrated {mape(cols['ship_dev'])}; calibrated on the other models' profiles "
            f"{mape(cols['lomo_dev'])}; on its own profile {mape(cols['own_dev'])}.",
            f"Eager step MAPE: uncalibrated {mape(cols['ship_eager'])}; calibrated on the other models' profiles "
            f"{mape(cols['lomo_eager'])}; on its own profile {mape(cols['own_eager'])}.", "",
            f"The corrections calibrate makes from all {len(names)} traces (measured / predicted kernel time per "
            "class, summed over the matched ops of two steps per model):", "", "```"] + classes + ["```", ""]
    return "\n".join(out)


def main():
    def generate(_, dlsim, tmp):
        return {"h200": report(dlsim, tmp, "h200", "`h200.yaml`", "shipped"),
                "h200-graph-sweep": report(dlsim, tmp, graph_sweep_base(dlsim, tmp),
                                           "the graph-timed sweep's kernel model (no host section)", "graph")}
    return host.report_main("profile_fidelity", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())
