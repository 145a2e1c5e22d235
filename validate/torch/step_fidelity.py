#!/usr/bin/env python3
"""How close dlsim's step times are to PyTorch's on the lent GPUs, before and after issue 28, model by model with
each model left out of everything fitted (results/fidelity.md is this script's report).

  validate/torch/step_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity.md]

Measured (torch_step_profile.py on the lent GPUs: results/fidelity/data/h100-2026-11-27c/step-profiles.json, 13
torchvision CNNs on an H100; h200-2026-11-27b/step-profiles.json, 11 on an H200): PyTorch 2.11 fp32 training
steps, the eager wall time per synchronised step and the replay of the whole step captured in a CUDA graph (the
device alone). The zoo's CNNs run as the zoo builds them; the two it lacks (EfficientNet-B0, ShuffleNet V2) as
`dlsim import-torch` records them (fit_host_model.py's CASES).

Predicted, per machine and held-out model M:
- before: the hardware files issue 28 started from (h100-sxm-harness.yaml, calibrated on dlsim's own harness, which
  h100-sxm.yaml was; the H200's datasheet file, h200-datasheet.yaml, which h200.yaml was), `launch: eager` and
  `launch: cuda-graph`;
- after, leave one model out: the kernel model fitted (`dlsim fit-kernels`) to the H200 sweep
  (results/fidelity/h200-2026-11-27-kernels.json) without the records measured from M's layers (in the sweep +
  traces form with the H200's graph-timed LLM sweep, h200-2026-11-28b/kernels-graph-llm.json, as shipped), on the GPU's
  datasheet file (the H100's kernel model is the H200 sweep's, carried over to the H100's peaks and bandwidth: the
  same GH100 die; nothing measured on the H100 goes into it), and the eager host model fitted
  (validate/torch/fit_host_model.py's method) to that machine's profiles of the two other models;
- after, as shipped: h100-sxm.yaml and h200.yaml (validate/torch/ship_hw_files.py: the sweep + traces form fitted on
  every model, and the host on every profile; in-sample, for the record);
- the GPU nobody measured: each GPU's models predicted with what a user who has measured only the other GPU has: a
  kernel model fitted onto this GPU's datasheet file from the other GPU's sweep and profiler traces (with its
  replays' idle time per kernel), and the other GPU's shipped host section and concurrency constants;
- the H100's own graph-timed sweep as the kernel base (results/fidelity/data/h100-2026-11-27c/kernels-graph.json),
  left one model out as above;
- the shipped files on another machine of the same GPU kind (the shared profiles: no fit, a prediction).
Device time is `dlsim run`'s cuda-graph iteration against the replay; the eager step its eager iteration against
the eager wall. Every dlsim run: pool pytorch-caching, no swap, serial, 2 iterations (the second's),
eager with `sync_every_step: true` (the host waits for the GPU at each step's end, as the measured steps did),
cuda-graph without (the replays were timed back to back).
"""
import gzip
import json
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402  (the host model's fit, shared)

SWEEP = ROOT / "results" / "fidelity" / "h200-2026-11-27-kernels.json"
# The H200's graph-timed sweep of Qwen2.5-0.5B's GEMMs, attention and memory-bound ops: the shipped fit's second sweep
# (ship_hw_files.py), so in the sweep + traces form too (it holds no CNN's layer: nothing of it is left out).
LLM_SWEEP = host.DATA / "h200-2026-11-28b" / "kernels-graph-llm.json"
# The sweeps the sweep + traces form adds, as ship_hw_files.py's SWEEPS: the LLM GEMMs (both leases, graph-timed),
# session 12's seeded random shapes, and (less the held-out model's layers) its grouped and depthwise convolutions
# of seven recorded CNNs and ViT-B/16's fp32 attention.
TRACED_SWEEPS = [LLM_SWEEP, host.DATA / "h200-2026-11-28c" / "kernels-graph-llm.json",
                 host.DATA / "h200-2026-11-28c" / "kernels-random-seed7.json"]
# ViT-B/16's fp32 attention kernels from its profiler trace (vit_sdpa_records.py): the sdpa_*.tf32 classes.
VIT_SDPA_SWEEP = host.DATA / "h200-2026-11-28c" / "kernels-vit-sdpa.json"
MODEL_SWEEPS = [host.DATA / "h200-2026-11-28c" / "kernels-grouped.json", VIT_SDPA_SWEEP]
# (label, profiles, shipped file, datasheet file the kernel model is fitted onto, the shipped PyTorch variant)
MACHINES = [("h100", "h100-2026-11-27c/step-profiles.json", "h100-sxm-harness", "h100-sxm-datasheet", "h100-sxm"),
            ("h200", "h200-2026-11-27b/step-profiles.json", "h200-datasheet", "h200-datasheet", "h200")]
# Another machine of the same kind: the shipped file against profiles measured on it (label, profiles, the shipped
# file, how its host was fitted: the H100's on the machine above; the H200's on four machines pooled, this one's
# three models among them, ship_hw_files.HOST_PROFILES).
OTHER_MACHINES = [("h200-other", "h200-2026-11-27-pytorch-step-profiles.json", "h200",
                   "its host fitted on four H200 machines' profiles pooled, these three among them"),
                  ("h100-other", "h100-2026-11-27-pytorch-step-profiles.json", "h100-sxm",
                   "fitted on the machine above")]
# The GPU nobody measured: (label, the profiles predicted, the sweep the kernel model is fitted to, the other GPU's
# profiles (whose traces join the fit and whose replays give the idle time per kernel), this GPU's datasheet file,
# the other GPU's shipped file whose host and concurrency sections are carried over). A user with only an H100 has
# its graph-timed sweep, not the H200's event-timed one.
CROSS = [("h100", "h100-2026-11-27c/step-profiles.json", SWEEP, "h200-2026-11-27b/step-profiles.json",
          "h100-sxm-datasheet", "h200"),
         ("h200", "h200-2026-11-27b/step-profiles.json", host.DATA / "h100-2026-11-27c" / "kernels-graph.json",
          "h100-2026-11-27c/step-profiles.json", "h200-datasheet", "h100-sxm")]
CARRIED_SECTIONS = ("host_cpu", "concurrent_kernels")


def carried_file(dlsim, tmp, label, sweep, donor_profiles, datasheet, donor):
    """A hardware file for a GPU nobody measured: the kernel model fitted (`dlsim fit-kernels`) to `sweep` and the
    other GPU's matching profiler traces onto this GPU's `datasheet` file, and over it the shipped file `donor`'s
    host and concurrency sections (CARRIED_SECTIONS)."""
    profiles = host.load_profiles(host.DATA / donor_profiles)
    names = list(profiles)
    trace_dir = (host.DATA / donor_profiles).parent / "traces"
    kernels = tmp / f"{datasheet}-from-{pathlib.Path(sweep).stem}-and-{label}-cross-traces.yaml"
    cmd = [dlsim.binary, "fit-kernels", str(sweep), "--hw", datasheet, "--out", str(kernels)] + \
        trace_args(dlsim, tmp, trace_dir, traced(names), datasheet) + \
        ["--gap-us", f"{replay_gap_us(profiles, names):.3f}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"step_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    lines, keep = [], False
    for line in host.hw_path(donor).read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            keep = line.split(":", 1)[0] in CARRIED_SECTIONS
        if keep and not line.startswith("#"):
            lines.append(line)
    out = tmp / f"{label}-carried-from-{donor}.yaml"
    out.write_text(f"base: {kernels}\n" + "\n".join(lines) + "\n")
    return out


def cross_report(dlsim, tmp, label, profile_file, sweep, donor_profiles, datasheet, donor):
    """This GPU's models predicted with what a user who measured only the other GPU has (carried_file): no
    measurement of this GPU in the file but its datasheet."""
    profiles = host.load_profiles(host.DATA / profile_file)
    hw = carried_file(dlsim, tmp, label, sweep, donor_profiles, datasheet, donor)
    return [f"#### {label.upper()} ({profiles[next(iter(profiles))]['device']}) predicted from the other GPU's data", "",
            f"`{datasheet}.yaml` with the kernel model `dlsim fit-kernels` fits to "
            f"`{pathlib.Path(sweep).relative_to(ROOT)}` and the profiler traces of "
            f"`results/fidelity/data/{pathlib.Path(donor_profiles).parent}/` (that GPU's replays' idle time per "
            f"kernel added), and `{donor}.yaml`'s host and concurrency sections over it. ms per step.",
            ""] + prediction_table(dlsim, profiles, hw)


# Profiler traces `dlsim calibrate --torch-profile`'s matcher refuses (more than a tenth of their ops match no op of
# dlsim's graph), left out of the trace samples: ShuffleNet V2's channel shuffle (aten::view, transpose, contiguous
# and their backward nodes) has no op in the graph `dlsim import-torch` records.
UNMATCHED_TRACES = {"shufflenet_v2_x1_0-b64"}


def traced(names):
    """The models of `names` whose profiler traces go into a fit."""
    return [n for n in names if n not in UNMATCHED_TRACES]


def replay_gap_us(profiles, names):
    """The GPU's idle time per kernel in a CUDA-graph replay, from the profiles of `names`: the replays' time less
    their kernels' (the profiled steps' CUPTI kernel time, gpu_busy_ms_per_iteration), over their kernels."""
    idle = sum(profiles[n]["graph_replay_ms_median"] - profiles[n]["gpu_busy_ms_per_iteration"] for n in names)
    return max(0.0, 1000.0 * idle / sum(profiles[n]["kernels_per_iteration"] for n in names))


def trace_args(dlsim, tmp, trace_dir, names, hw):
    """`--trace T --experiment E` for each of `names` (its profiler trace, unzipped into tmp, and the experiment of
    its model and batch)."""
    args = []
    for n in names:
        trace = tmp / f"{trace_dir.parent.name}-{n}.trace.json"
        if not trace.exists():
            with gzip.open(trace_dir / f"{n}.json.gz", "rb") as src:
                trace.write_bytes(src.read())
        model, batch = host.CASES[n]
        exp = tmp / f"trace-exp-{n}-{hw}.yaml"
        exp.write_text(json.dumps(host.step_experiment(dlsim.model(model, batch), batch, hw, "eager")))
        args += ["--trace", str(trace), "--experiment", str(exp)]
    return args


def fit_kernels(dlsim, tmp, base, held, sweep_file=SWEEP, traces=None, extra_sweeps=None, model_sweeps=None):
    """A hardware file: `base` with the kernel model fitted to the sweep less the records of `held`'s layers (and,
    with `traces` = (trace directory, profiles, names), the LLM sweep and the kernels of those models' profiler
    traces as device-timed samples, the replays' idle time per kernel, from the same models, added to each: the
    shipped fit's inputs: TRACED_SWEEPS and MODEL_SWEEPS less `held`'s layers, unless `extra_sweeps` and
    `model_sweeps` name others)."""
    sweep = json.loads(pathlib.Path(sweep_file).read_text())
    name = held.rsplit("-", 1)[0]
    kept = [r for r in sweep["records"] if r.get("src") != f"model:{name}"]
    dropped = len(sweep["records"]) - len(kept)
    sweep["records"] = kept
    stem = pathlib.Path(sweep_file).stem
    path = tmp / f"{stem}-no-{name}.json"
    path.write_text(json.dumps(sweep))
    out = tmp / f"{base}-{stem}-no-{name}{'-traces' if traces else ''}.yaml"
    cmd = [dlsim.binary, "fit-kernels", str(path), "--hw", base, "--out", str(out)]
    if traces:
        trace_dir, profiles, names = traces
        extra = TRACED_SWEEPS if extra_sweeps is None else extra_sweeps
        models = MODEL_SWEEPS if model_sweeps is None else model_sweeps
        cmd[3:3] = [str(s) for s in extra] + [str(without_model(f, name, tmp)) for f in models]
        cmd += trace_args(dlsim, tmp, trace_dir, traced(names), base) + \
            ["--gap-us", f"{replay_gap_us(profiles, names):.3f}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"step_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return out, dropped


def without_model(sweep_file, name, tmp):
    """`sweep_file` less the records of model `name`'s layers (src `model:NAME` or `model:NAME-bBATCH`), written
    into `tmp`."""
    sweep = json.loads(pathlib.Path(sweep_file).read_text())
    sweep["records"] = [r for r in sweep["records"]
                        if r.get("src") != f"model:{name}" and not r.get("src", "").startswith(f"model:{name}-b")]
    path = tmp / f"{pathlib.Path(sweep_file).stem}-no-{name}.json"
    path.write_text(json.dumps(sweep))
    return path


def times(dlsim, model, batch, hw):
    """(eager iteration ms, cuda-graph iteration ms, bound) of `dlsim run` on `hw`."""
    eager, _ = dlsim.run(model, batch, hw, launch="eager", trace=False)
    graph, _ = dlsim.run(model, batch, hw, launch="cuda-graph", trace=False)
    return eager["iteration_time_us"] / 1000.0, graph["iteration_time_us"] / 1000.0, eager["bound"]


def err(p, m):
    return p / m - 1


def pct(e):
    return f"{100.0 * e:+.1f} %"


def mape(errors):
    return f"{100.0 * sum(abs(e) for e in errors) / len(errors):.1f} % (largest {100.0 * max(abs(e) for e in errors):.1f} %)"


def machine_report(dlsim, tmp, label, profile_file, shipped, datasheet, variant):
    profiles = host.load_profiles(host.DATA / profile_file)
    trace_dir = (host.DATA / profile_file).parent / "traces"
    models = list(profiles)
    device = profiles[models[0]]["device"]
    keys = ("before_dev", "before_eager", "lomo_dev", "lomo_eager", "trace_dev", "trace_eager", "in_dev", "in_eager")
    rows, errs = [], {k: [] for k in keys}
    for held in models:
        model, batch = host.CASES[held]
        p = profiles[held]
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        b_eager, b_graph, _ = times(dlsim, model, batch, shipped)
        kernels_hw, dropped = fit_kernels(dlsim, tmp, datasheet, held)
        others = [n for n in models if n != held]
        # The device's fixed cost per kernel (the sweep's fixed costs hold PyTorch's dispatch), then the host,
        # both fitted on the other models, as fit_host_model.py fits the shipped files.
        base, fixed_us = host.with_device_fixed(dlsim, str(kernels_hw), profiles, others)
        _, _, costs = host.fit(dlsim, str(base), profiles, others)
        l_eager, l_graph, _ = times(dlsim, model, batch, dlsim.hw_file(str(base), costs))
        # The same with the other models' profiler traces as device-timed samples: the classes' fixed costs are
        # then the device's, and no fixed cost per kernel is fitted on top.
        traced_hw, _ = fit_kernels(dlsim, tmp, datasheet, held, traces=(trace_dir, profiles, others))
        t_base, t_fixed = host.with_device_fixed(dlsim, str(traced_hw), profiles, others)
        if t_fixed is not None:
            raise SystemExit(f"step_fidelity: {traced_hw} still holds the dispatch in its fixed costs")
        _, _, t_costs = host.fit(dlsim, str(t_base), profiles, others)
        t_eager, t_graph, bound = times(dlsim, model, batch, dlsim.hw_file(str(t_base), t_costs))
        i_eager, i_graph, _ = times(dlsim, model, batch, variant)
        for key, pred, meas in (("before_dev", b_graph, replay), ("before_eager", b_eager, wall),
                                ("lomo_dev", l_graph, replay), ("lomo_eager", l_eager, wall),
                                ("trace_dev", t_graph, replay), ("trace_eager", t_eager, wall),
                                ("in_dev", i_graph, replay), ("in_eager", i_eager, wall)):
            errs[key].append(err(pred, meas))
        rows.append(f"| {held} | {replay:.2f} | {b_graph:.2f} ({pct(err(b_graph, replay))}) | "
                    f"{l_graph:.2f} ({pct(err(l_graph, replay))}) | {t_graph:.2f} ({pct(err(t_graph, replay))}) | "
                    f"{i_graph:.2f} ({pct(err(i_graph, replay))}) | "
                    f"{wall:.2f} | {b_eager:.2f} ({pct(err(b_eager, wall))}) | "
                    f"{l_eager:.2f} ({pct(err(l_eager, wall))}) | {t_eager:.2f} ({pct(err(t_eager, wall))}) | "
                    f"{i_eager:.2f} ({pct(err(i_eager, wall))}) | "
                    f"{bound} | {fixed_us:.2f} | {replay_gap_us(profiles, others):.2f} | {dropped} |")
    out = [f"### {label.upper()} machine ({device})", "",
           f"Before: `{shipped}.yaml`. Leave one model out, *sweep*: kernel model fitted onto `{datasheet}.yaml` "
           "without the held-out model's sweep records, one device fixed cost per kernel and the host fitted on the "
           "other models' profiles; *sweep + traces*: the same sweep and the other models' profiler traces' kernels "
           "fitted together (the traces' device-timed, the sweep's dispatch apart), the replays' idle time per kernel "
           "(from the other models) added to the traces' samples, no fixed cost fitted on top. In-sample: "
           f"`{variant}.yaml`. "
           "ms per step; the error against the measurement in brackets.", "",
           "| model | replay ms | before | leave one out: sweep | sweep + traces | in-sample | eager ms | before | "
           "leave one out: sweep | sweep + traces | in-sample | bound (sweep + traces) | device fixed µs (sweep) | "
           "idle µs per kernel (traces) | sweep records left out |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    out += rows
    out += ["", f"Device time (cuda-graph vs replay), MAPE: before {mape(errs['before_dev'])}; leave one model out, "
            f"sweep {mape(errs['lomo_dev'])}; sweep + traces {mape(errs['trace_dev'])}; "
            f"in-sample {mape(errs['in_dev'])}.",
            f"Eager step, MAPE: before {mape(errs['before_eager'])}; leave one model out, sweep "
            f"{mape(errs['lomo_eager'])}; sweep + traces {mape(errs['trace_eager'])}; "
            f"in-sample {mape(errs['in_eager'])}.",
            ""]
    return out


def with_replay_fixed_cost(path):
    """The fitted file at `path` with kernel_model.fixed_includes_dispatch set: the device's fixed cost per kernel
    (fitted to the replays, fit_host_model.with_device_fixed) then replaces each fitted class's own fixed cost."""
    text = path.read_text()
    if "\n  tile:" not in text:
        raise SystemExit(f"step_fidelity: {path}: no kernel_model tile line to set fixed_includes_dispatch beside")
    out = path.with_name(path.stem + "-replay-fixed.yaml")
    out.write_text(text.replace("\n  tile:", "\n  fixed_includes_dispatch: true\n  tile:", 1))
    return out


def graph_sweep_report(dlsim, tmp, label, profile_file, sweep_file, datasheet, replay_fixed=False):
    """Leave one model out with the kernel model fitted to the GPU's own graph-timed sweep less the held-out model's
    records, the host fitted on the other models' profiles. The sweep times each kernel's device time alone, so its
    classes' fixed costs are the device's and none is fitted on top; with `replay_fixed`, one fixed cost per kernel
    fitted to the other models' replays replaces them (as for the event-timed sweep)."""
    profiles = host.load_profiles(host.DATA / profile_file)
    models = list(profiles)
    rows, dev, eager = [], [], []
    for held in models:
        model, batch = host.CASES[held]
        p = profiles[held]
        kernels_hw, dropped = fit_kernels(dlsim, tmp, datasheet, held, sweep_file)
        if replay_fixed:
            kernels_hw = with_replay_fixed_cost(kernels_hw)
        others = [n for n in models if n != held]
        base, fixed_us = host.with_device_fixed(dlsim, str(kernels_hw), profiles, others)
        _, _, costs = host.fit(dlsim, str(base), profiles, others)
        e, g, bound = times(dlsim, model, batch, dlsim.hw_file(str(base), costs))
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        dev.append(err(g, replay))
        eager.append(err(e, wall))
        rows.append(f"| {held} | {replay:.2f} | {g:.2f} ({pct(err(g, replay))}) | {wall:.2f} | "
                    f"{e:.2f} ({pct(err(e, wall))}) | {bound} | "
                    f"{'none' if fixed_us is None else f'{fixed_us:.2f}'} | {dropped} |")
    fixed = ("; its classes' fixed costs replaced by one per kernel fitted to the other models' replays "
             "(`fixed_includes_dispatch: true` set in the fitted file)" if replay_fixed else
             "; its classes' own fixed costs, none fitted on top")
    return [f"Leave one model out on the {label.upper()} machine with the kernel model fitted onto `{datasheet}.yaml` "
            f"from `{pathlib.Path(sweep_file).relative_to(ROOT)}` (graph-timed) less the held-out model's records"
            f"{fixed}; the host fitted on the other models' profiles. ms per step.", "",
            "| model | replay ms | dlsim cuda-graph | eager ms | dlsim eager | bound | device fixed µs fitted | "
            "sweep records left out |", "|---|---:|---:|---:|---:|---|---:|---:|"] + \
        rows + ["", f"Device time MAPE {mape(dev)}; eager step MAPE {mape(eager)}.", ""]


def other_machine_report(dlsim, label, profile_file, variant, fitted):
    """The shipped file on the same GPU kind in another VM (another host CPU)."""
    profiles = host.load_profiles(host.DATA / profile_file)
    return [f"`{variant}.yaml`, {fitted}, predicting the same models measured on another "
            f"{profiles[next(iter(profiles))]['device']} machine (`{profile_file}`, shared data): same GPU kind, "
            "another VM and host CPU. ms per step.", ""] + prediction_table(dlsim, profiles, variant)


def prediction_table(dlsim, profiles, hw):
    """Each profiled model run once on `hw` (no fit): the table of measured and predicted times, and the MAPEs."""
    rows, dev, eager = [], [], []
    for name, p in profiles.items():
        model, batch = host.CASES[name]
        e, g, bound = times(dlsim, model, batch, hw)
        replay, wall = p["graph_replay_ms_median"], p["eager_wall_ms_median"]
        dev.append(err(g, replay))
        eager.append(err(e, wall))
        rows.append(f"| {name} | {replay:.2f} | {g:.2f} ({pct(err(g, replay))}) | {wall:.2f} | "
                    f"{e:.2f} ({pct(err(e, wall))}) | {bound} |")
    return ["| model | replay ms | dlsim cuda-graph | eager ms | dlsim eager | bound |",
            "|---|---:|---:|---:|---:|---|"] + rows + ["", f"Device time MAPE {mape(dev)}; eager step MAPE {mape(eager)}.", ""]


def main():
    def generate(_, binary, tmp):
        dlsim = host.Dlsim(binary, tmp)
        generated = {label: "\n".join(machine_report(dlsim, tmp, label, *rest)) for label, *rest in MACHINES}
        generated.update({label: "\n".join(other_machine_report(dlsim, label, *rest))
                          for label, *rest in OTHER_MACHINES})
        generated["h100-graph-sweep"] = "\n".join(line for replay_fixed in (False, True) for line in graph_sweep_report(
            dlsim, tmp, "h100", "h100-2026-11-27c/step-profiles.json",
            host.DATA / "h100-2026-11-27c" / "kernels-graph.json", "h100-sxm-datasheet", replay_fixed))
        generated["cross"] = "\n".join(line for label, *rest in CROSS
                                       for line in cross_report(dlsim, tmp, label, *rest))
        return generated
    return host.report_main("step_fidelity", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())
