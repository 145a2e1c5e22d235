#!/usr/bin/env python3
"""dlsim's stream-concurrency speed-ups and memory beside PyTorch's on a lent H200 or H100 (issue 30, items 2-3);
results/concurrency/pytorch-h200.md and pytorch-h100.md are this script's reports.

  validate/torch/concurrency_fidelity.py [--dlsim build/bin/dlsim] [--jobs 2] [--gpu h200|h100]
                                         [--report results/concurrency/pytorch-GPU.md]

Measured (results/fidelity/data/h200-2026-11-27b/ and h100-2026-11-27c/, torch_concurrency_reference.py,
PyTorch 2.11, the same command on both): torchvision Inception-v3 at batch 8 and 32 and GoogLeNet at 32, serial
and with every inception block's branches on side streams (`branch-streams`, 5 streams), and ResNet-50 at 32
serial and with each convolution's weight gradient on a side stream (`dgrad-wgrad`, 2 streams); on the H200 also
(h200-2026-11-28/, the same script and software) Inception-v3 at batch 1 and 128 and GoogLeNet and ResNet-50 at
128 (H200_CASES). Each in eager mode (the host's clock around a step and its synchronize: `host_ms_median`) and
captured whole into one CUDA graph (CUDA events around one replay, each replay followed by a synchronize:
`device_ms_median`); `max_memory_reserved`/`max_memory_allocated` after the warm-up. A speed-up is taken within
one measurement file (one run of the script), serial's row against the schedule's.

Predicted: the plans of configs/validation/concurrency/ (model, batch, policy, pool pytorch-caching, no swap,
their 3 iterations) with the GPU's PyTorch hardware file (GPUS below: `h200`, the kernel model fitted to PyTorch's
kernels on the H200, or `h100-sxm`, the kernel model fitted to PyTorch's on the H200 and H100, with the
concurrent_kernels fitted on the harness's micro-benchmarks; both with PyTorch's eager host fitted on that machine, hw/eager_host_model.h), once with
`launch: eager` and once with `launch: cuda-graph`, both with `sync_every_step: true` (each measured step and
each replay was followed by a synchronize). GoogLeNet's plan is `critical-path`; the measured schedule is
branch-parallel, so dlsim's `branch-streams` runs too (the serial plan with the policy replaced). GoogLeNet and
ResNet-50 have plans at batch 32 only: at 128 dlsim runs the batch-32 plans with `batch: 128` (the plans differ
in nothing else). Nothing here is fitted: the hardware file is used as shipped.
From each run's Chrome trace (its last iteration): the time two or more kernels ran at once, the overlap that
a concurrent schedule can gain from. Each run is repeated on the file with another `concurrent_kernels:` laid over
it (a diagnostic column): the H100's fitted constants on the H200, the [A] defaults on the H100.

The graph rows' `replay_matches_serial_eager` is checked against how far two eager runs drift apart (the
replay-check block: the H200's own cases in its report, the cases both GPUs measured in the H100's). With
--gpu h100 the report also sets both GPUs' measured speed-ups side by side (the cases both measured), and refits
the two concurrent_kernels constants on both GPUs' graph speed-ups with a leave-one-model-out error
(concurrent_kernels_refit.py).
"""
import functools
import json
import pathlib
import sys

import yaml

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "scripts"))
import concurrent_kernels_refit as refit  # noqa: E402
import fit_host_model as host  # noqa: E402  (emit_report: the generated blocks and their provenance)
from studies.dlsim import Dlsim  # noqa: E402  (the one way the studies run dlsim)

DATA_ROOT = ROOT / "results" / "fidelity" / "data"
PLANS = ROOT / "configs" / "validation" / "concurrency"
# Per GPU: its measurements, the hardware file dlsim runs, and the diagnostic overlay (its column's name and text).
# The H100's file is h100-sxm: its concurrent_kernels are the ones `dlsim calibrate` fitted to concurrent-convolution
# micro-benchmarks on a real H100 (copied from h100-sxm-harness.yaml), and its host is PyTorch's, fitted on the H100
# machine. On the H100 the diagnostic is
# the [A] defaults, what the fitted constants change; on the H200 it is the H100's constants, which h200.yaml now
# carries itself (the column equals dlsim's; kept so the H200 report regenerates as it was written).
H100_CONCURRENT_KERNELS = "concurrent_kernels:\n  gemm_blocks_per_sm: 1\n  co_run_slowdown: 0.312\n"
DEFAULT_CONCURRENT_KERNELS = "concurrent_kernels:\n  gemm_blocks_per_sm: 2\n  co_run_slowdown: 0\n"
# (model, batch, the measured concurrent schedule, dlsim's policies set beside it: the first is the same kind of
# schedule, the others the plan's own where it differs). CASES: what both GPUs measured (the H100 report's
# comparisons of the two); H200_CASES: all the H200 measured, the batch sweep of issue 30 item 4 included.
CASES = [("inception_v3", 8, "branch-streams", ["branch-streams"]),
         ("inception_v3", 32, "branch-streams", ["branch-streams"]),
         ("googlenet", 32, "branch-streams", ["branch-streams", "critical-path"]),
         ("resnet50", 32, "dgrad-wgrad", ["dgrad-wgrad"])]
H200_CASES = [("inception_v3", 1, "branch-streams", ["branch-streams"])] + CASES[:2] + [
    ("inception_v3", 128, "branch-streams", ["branch-streams"]), CASES[2],
    ("googlenet", 128, "branch-streams", ["branch-streams", "critical-path"]), CASES[3],
    ("resnet50", 128, "dgrad-wgrad", ["dgrad-wgrad"])]
# Each GPU's measurement files, oldest first (a later file's rows supersede an earlier one's: the ResNet-50 rerun).
H200_FILES = [("h200-2026-11-27b", "concurrency.json"), ("h200-2026-11-27b", "concurrency-resnet50-rerun.json"),
              ("h200-2026-11-28", "concurrency.json"), ("h200-2026-11-28", "concurrency-b128.json")]
H100_FILES = [("h100-2026-11-27c", "concurrency.json"), ("h100-2026-11-27c", "concurrency-resnet50-rerun.json")]
GPUS = {
    "h200": {"name": "H200", "files": H200_FILES, "cases": H200_CASES, "hw": "h200",
             "diag": ("H100's concurrent_kernels", H100_CONCURRENT_KERNELS,
                      "the H100 file's fitted `concurrent_kernels` (`gemm_blocks_per_sm: 1`, `co_run_slowdown: 0.312`) "
                      "in place of the defaults")},
    "h100": {"name": "H100", "files": H100_FILES, "cases": CASES, "hw": "h100-sxm",
             "diag": ("the defaults' concurrent_kernels", DEFAULT_CONCURRENT_KERNELS,
                      "the [A] defaults (`gemm_blocks_per_sm: 2`, `co_run_slowdown: 0`) in place of the fitted "
                      "`concurrent_kernels`")},
}
MODES = [("eager", "eager", "host_ms_median"), ("graph", "cuda-graph", "device_ms_median")]
MIB = 2 ** 20


def file_labels(files):
    """Each measurement file's name in the tables: the file's name where all lie in one folder, else folder/name."""
    one = len({folder for folder, _ in files}) == 1
    return [name if one else f"{folder}/{name}" for folder, name in files]


def load_measured(files):
    """{file label: {(model, batch, schedule, mode): row}} of the rows that ran (in `files`' order), and the rows
    that did not."""
    ok, failed = {}, []
    for (folder, file), name in zip(files, file_labels(files)):
        data = json.loads((DATA_ROOT / folder / file).read_text())
        ok[name] = {}
        for r in data["rows"]:
            key = (r["model"], r["batch"], r["schedule"], r["mode"])
            if r.get("status") == "ok":
                ok[name][key] = r
            else:
                failed.append((name, key, r.get("status"), r.get("error", "")))
    return ok, failed


def measured_pair(ok, model, batch, schedule, mode):
    """(file, serial row, schedule row) from the file that holds both: a speed-up within one process."""
    for name, rows in reversed(ok.items()):  # a rerun supersedes the first call's rows
        if (model, batch, schedule, mode) in rows and (model, batch, "serial", mode) in rows:
            return name, rows[(model, batch, "serial", mode)], rows[(model, batch, schedule, mode)]
    raise SystemExit(f"concurrency_fidelity: no measured {model} b{batch} serial and {schedule} ({mode}) in one file")


PLAN_BATCH = 32  # the batch of every model's plans; the batch sweep's other batches have Inception-v3's alone


def plan(model, batch, policy):
    """The validation plan as an experiment dict, and its footnote marks: a policy without a plan of its own is
    the serial plan with `concurrency` replaced (GoogLeNet's branch-streams, ¹), a batch without plans is the
    model's batch-32 plan with `batch` replaced (GoogLeNet and ResNet-50 at 128, ²)."""
    marks = ""
    if not (PLANS / f"{model}-b{batch}-serial.yaml").exists():
        at, marks = PLAN_BATCH, "²"
    else:
        at = batch
    path = PLANS / f"{model}-b{at}-{policy}.yaml"
    own = path.exists()
    exp = yaml.safe_load((path if own else PLANS / f"{model}-b{at}-serial.yaml").read_text())
    if not own:
        exp["concurrency"] = policy
        marks = "¹" + marks
    exp["batch"] = batch
    return exp, marks


def overlap_ms(trace_path):
    """(busy, overlapped, kernels) of the last iteration's kernels in a Chrome trace: the ms any kernel runs, the ms
    two or more run at once, and how many kernels ran."""
    events = json.loads(pathlib.Path(trace_path).read_text())["traceEvents"]
    kernels = [e for e in events if e.get("ph") == "X" and e.get("tid", -1) >= 0
               and e.get("cat") not in ("host", "copy", "iteration") and "iteration" in e.get("args", {})]
    last = max(e["args"]["iteration"] for e in kernels)
    edges = sorted([(e["ts"], 1) for e in kernels if e["args"]["iteration"] == last] +
                   [(e["ts"] + e["dur"], -1) for e in kernels if e["args"]["iteration"] == last],
                   key=lambda x: (x[0], x[1]))
    busy = overlapped = 0.0
    running, at = 0, None
    for t, step in edges:
        if at is not None:
            busy += (t - at) if running >= 1 else 0.0
            overlapped += (t - at) if running >= 2 else 0.0
        running += step
        at = t
    return busy / 1000.0, overlapped / 1000.0, len(edges) // 2


def simulate(dlsim, tmp, model, batch, policy, launch, hw):
    exp, _ = plan(model, batch, policy)
    exp.update(hw=str(hw), launch=launch, sync_every_step=True)
    trace = tmp / f"{model}-b{batch}-{policy}-{launch}-{pathlib.Path(str(hw)).stem}.json"
    out = dlsim.json(["run"], exp, extra=["--chrome-trace", str(trace)])
    out["busy_ms"], out["overlap_ms"], out["kernels"] = overlap_ms(trace)
    return out


def pct(e):
    return f"{100.0 * e:+.1f} %"


def speedup_rows(ok, sims, gpu):
    lines = ["| model | batch | measured schedule | dlsim policy | mode | measured serial ms | measured ms | "
             "measured speed-up | dlsim serial ms | dlsim ms | dlsim speed-up | speed-up error | dlsim bound "
             "(host / device busy ms) | dlsim kernels overlapped ms (serial → policy) | dlsim speed-up, "
             f"{gpu['diag'][0]} | dlsim kernels per step |",
             "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    marks = set()
    for model, batch, schedule, policies in gpu["cases"]:
        for mode, launch, field in MODES:
            _, m_serial, m_sched = measured_pair(ok, model, batch, schedule, mode)
            ms_serial, ms_sched = m_serial[field], m_sched[field]
            m_up = ms_serial / ms_sched
            s_serial = sims[(model, batch, "serial", launch, "base")]
            for policy in policies:
                s = sims[(model, batch, policy, launch, "base")]
                d_serial, d_sched = s_serial["iteration_time_us"] / 1000.0, s["iteration_time_us"] / 1000.0
                d_up = d_serial / d_sched
                diag = (sims[(model, batch, "serial", launch, "diag")]["iteration_time_us"] /
                        sims[(model, batch, policy, launch, "diag")]["iteration_time_us"])
                mark = plan(model, batch, policy)[1]
                marks.update(mark)
                lines.append(
                    f"| {model} | {batch} | {schedule} | {policy}{' ' + mark if mark else ''} | "
                    f"{mode} | {ms_serial:.2f} | {ms_sched:.2f} | {m_up:.3f}× | {d_serial:.2f} | {d_sched:.2f} | "
                    f"{d_up:.3f}× | {pct(d_up / m_up - 1)} | {s['bound']} ({s['host_time_us'] / 1000.0:.1f} / "
                    f"{s['device_time_us'] / 1000.0:.1f}) | {s_serial['overlap_ms']:.2f} → {s['overlap_ms']:.2f} | "
                    f"{diag:.3f}× | {s['kernels']} |")
    lines += ["", "Measured: eager `host_ms_median`, graph `device_ms_median` (one replay). dlsim: `iteration_time_us` "
              f"on `{gpu['hw']}`; *bound* and the busy times are `run --json`'s `bound`, `host_time_us` and "
              "`device_time_us`; the overlap is from the run's Chrome trace. Speed-up error: dlsim's speed-up over "
              f"the measured one, less 1. Last column, a diagnostic: the same runs on `{gpu['hw']}` with "
              f"{gpu['diag'][2]}. ¹ no plan of its own: the serial plan with `concurrency: branch-streams`." +
              (f" ² no plans at this batch: the model's batch-{PLAN_BATCH} plans (serial's and the policy's) with "
               "`batch` replaced." if "²" in marks else "")]
    return lines


def memory_rows(ok, sims, gpu):
    lines = ["| model | batch | schedule (dlsim policy) | mode | measured reserved MiB | dlsim reserved MiB | error | "
             "measured Δ reserved over serial MiB | dlsim Δ MiB | measured allocated MiB | dlsim peak live MiB | "
             "error |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for model, batch, schedule, policies in gpu["cases"]:
        for sched, pols in (("serial", ["serial"]), (schedule, policies)):
            for mode, launch, _ in MODES:
                _, m_serial, m_sched = measured_pair(ok, model, batch, schedule, mode)
                m = m_serial if sched == "serial" else m_sched
                for policy in pols:
                    s = sims[(model, batch, policy, launch, "base")]
                    mr, ma = m["max_reserved_bytes"], m["max_allocated_bytes"]
                    dr, dl = s["peak_reserved_bytes"], s["peak_live_bytes"]
                    if sched != "serial":
                        ds = sims[(model, batch, "serial", launch, "base")]["peak_reserved_bytes"]
                        delta = (f"{(mr - m_serial['max_reserved_bytes']) / MIB:+,.0f} | {(dr - ds) / MIB:+,.0f}")
                    else:
                        delta = "- | -"
                    label = sched if policy == sched else f"{sched} ({policy})"
                    lines.append(f"| {model} | {batch} | {label} | {mode} | {mr / MIB:,.0f} | {dr / MIB:,.0f} | "
                                 f"{pct(dr / mr - 1)} | {delta} | {ma / MIB:,.0f} | {dl / MIB:,.0f} | "
                                 f"{pct(dl / ma - 1)} |")
    lines += ["", "Measured: `torch.cuda.max_memory_reserved()` / `max_memory_allocated()` after the warm-up (graph "
              "rows: over the capture and the replays, the eager warm-up's blocks still cached). "
              f"dlsim on `{gpu['hw']}`: "
              "`peak_reserved_bytes` and `peak_live_bytes` (the live tensors' bytes, without the allocator's "
              "512-byte rounding that `allocated` counts). Δ: the schedule's reserved less serial's, same mode."]
    return lines


def warmup_run(dlsim, model, batch, policy, steps, hw):
    """dlsim's run of the measured warm-up: `steps` eager steps with no synchronize between them."""
    exp, _ = plan(model, batch, policy)
    exp.update(hw=str(hw), launch="eager", sync_every_step=False, iterations=steps)
    return dlsim.json(["run"], exp)


def warmup_rows(ok, sims, warm, gpu):
    """The reserved bytes the measured warm-up leaves cached beside dlsim's run of it. The reference's warm-up
    (torch_concurrency_reference.py: the checked first step, then `warmup - 1` steps) synchronizes only after the
    first step and at its end, and `reset_peak_memory_stats()` after it sets the peak to what is reserved then, so
    both modes' measured peaks hold what an unsynchronised warm-up left cached (the graph rows' warm-up runs
    eagerly on a side stream before the capture). warm: {(model, batch, policy): dlsim's warm-up run}."""
    lines = ["| model | batch | schedule (dlsim policy) | measured Δ reserved eager MiB | graph MiB | dlsim Δ, a "
             "synchronize after each step MiB | dlsim Δ, warm-up without MiB | dlsim warm-up: host / device busy "
             "ms | dlsim reserved, warm-up without MiB | measured reserved eager MiB |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for model, batch, schedule, policies in gpu["cases"]:
        policy = policies[0]
        deltas = []
        for mode, _, _ in MODES:
            _, m_serial, m_sched = measured_pair(ok, model, batch, schedule, mode)
            deltas.append((m_sched["max_reserved_bytes"] - m_serial["max_reserved_bytes"]) / MIB)
        synced = (sims[(model, batch, policy, "eager", "base")]["peak_reserved_bytes"] -
                  sims[(model, batch, "serial", "eager", "base")]["peak_reserved_bytes"]) / MIB
        w, w_serial = warm[(model, batch, policy)], warm[(model, batch, "serial")]
        unsynced = (w["peak_reserved_bytes"] - w_serial["peak_reserved_bytes"]) / MIB
        label = schedule if policy == schedule else f"{schedule} ({policy})"
        lines.append(f"| {model} | {batch} | {label} | {deltas[0]:+,.0f} | {deltas[1]:+,.0f} | {synced:+,.0f} | "
                     f"{unsynced:+,.0f} | {w['host_time_us'] / 1000.0:.1f} / {w['device_time_us'] / 1000.0:.1f} | "
                     f"{w['peak_reserved_bytes'] / MIB:,.0f} | "
                     f"{measured_pair(ok, model, batch, schedule, 'eager')[2]['max_reserved_bytes'] / MIB:,.0f} |")
    lines += ["", "Δ: the schedule's peak reserved less serial's. Measured: as in the table above. dlsim on "
              f"`{gpu['hw']}`: with a synchronize after each step, the runs of the table above; without, `launch: "
              "eager`, `sync_every_step: false` and as many steps as the measured warm-up (`warmup`), serial's "
              "and the policy's alike. Host / device busy: the policy's warm-up run's `host_time_us` and "
              "`device_time_us` (the steady-state, last step's)."]
    return lines


def spread_rows(ok, failed):
    lines = ["| file | model | batch | schedule | eager median ms | eager min ms | graph median ms | graph min ms |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for name in ok:
        keys = sorted({k[:3] for k in ok[name]}, key=lambda k: (k[0], k[1], k[2] != "serial", k[2]))
        for model, batch, schedule in keys:
            cells = []
            for mode, _, field in MODES:
                r = ok[name].get((model, batch, schedule, mode))
                cells += [f"{r[field]:.2f}", f"{r[field.replace('median', 'min')]:.2f}"] if r else ["-", "-"]
            lines.append(f"| `{name}` | {model} | {batch} | {schedule} | " + " | ".join(cells) + " |")
    lines.append("")
    for name, key, status, error in failed:
        lines.append(f"Not measured in `{name}`: {key[0]} b{key[1]} {key[2]} {key[3]}: {status} ({error}).")
    return lines


def measured_speedup(ok, model, batch, schedule, mode):
    field = dict((m, f) for m, _, f in MODES)[mode]
    _, serial, sched = measured_pair(ok, model, batch, schedule, mode)
    return serial[field] / sched[field]


def gpu_rows(measured):
    """Both GPUs' measured speed-ups, the same schedules and software. measured: {gpu: (ok, failed)}."""
    names = [GPUS[g]["name"] for g in measured]
    lines = ["| model | batch | schedule | mode | " + " | ".join(f"{n} serial ms | {n} ms | {n} speed-up" for n in names)
             + f" | {names[-1]} speed-up / {names[0]}'s |",
             "|---|---:|---|---|" + "---:|" * (3 * len(names) + 1)]
    for model, batch, schedule, _ in CASES:
        for mode, _, field in MODES:
            cells, ups = [], []
            for g, (ok, _) in measured.items():
                _, serial, sched = measured_pair(ok, model, batch, schedule, mode)
                ups.append(serial[field] / sched[field])
                cells += [f"{serial[field]:.2f}", f"{sched[field]:.2f}", f"{ups[-1]:.3f}×"]
            lines.append(f"| {model} | {batch} | {schedule} | {mode} | " + " | ".join(cells) +
                         f" | {pct(ups[-1] / ups[0] - 1)} |")
    lines += ["", "Eager: `host_ms_median`; graph: `device_ms_median`; each speed-up within one measurement file "
              "(ResNet-50's from the rerun file on both GPUs)."]
    return lines


def rel(a, b):
    """|a / b - 1|; 0 where both are 0 (Inception-v3 at batch 1 learns its one fixed batch: the loss is exactly 0
    from the 5th step on)."""
    return abs(a / b - 1) if b else (0.0 if a == 0 else float("inf"))


def replay_rows(measured, cases):
    """The graph rows' `replay_matches_serial_eager` (the first replay's loss against serial eager's loss at the
    same step, 1e-3 relative) beside how far two eager runs of the same model drift apart by that step: the
    schedule's eager run against serial's on the same GPU, and, where two GPUs are given, serial's on this GPU
    against serial's on the other. A replay that drifts no further than two eager runs do is not a wrong replay."""
    two = len(measured) > 1
    other_cell = (lambda v: f" {v} |") if two else (lambda v: "")
    lines = ["| GPU | model | batch | schedule | replay_matches_serial_eager | replay vs serial eager | schedule eager "
             "vs serial eager |" + other_cell("serial eager vs the other GPU's") +
             " first step's grad norm, graph row vs eager row |",
             "|---|---|---:|---|---|---:|---:|" + ("---:|" if two else "") + "---:|"]
    other = {g: next(o for o in measured if o != g) for g in measured} if two else {}
    for g, (ok, _) in measured.items():
        for model, batch, schedule, _ in cases:
            for sched in ("serial", schedule):
                name, serial_e, _ = measured_pair(ok, model, batch, "serial", "eager")
                rows = ok[name]
                graph, eager = rows.get((model, batch, sched, "graph")), rows.get((model, batch, sched, "eager"))
                if not graph or "replay_rel_diff_vs_serial_eager" not in graph:
                    continue
                step = graph["warmup"]
                loss_at = serial_e["loss_trace"][step]
                drift_self = rel(eager["loss_trace"][step], loss_at) if eager else None
                o_ok = measured[other[g]][0] if g in other else None
                o_name = measured_pair(o_ok, model, batch, "serial", "eager")[0] if o_ok else None
                o_loss = o_ok[o_name][(model, batch, "serial", "eager")]["loss_trace"][step] if o_ok else None
                drift_gpu = rel(loss_at, o_loss) if o_loss else None
                # The same first step (from the same seed and weights) taken twice in one process: eager's, graph's.
                grad = (abs(graph["first_step"]["grad_norm"] / eager["first_step"]["grad_norm"] - 1)
                        if eager else None)
                fmt = (lambda v: "-" if v is None else f"{v:.1e}")
                lines.append(f"| {GPUS[g]['name']} | {model} | {batch} | {sched} | "
                             f"{graph['replay_matches_serial_eager']} | {fmt(graph['replay_rel_diff_vs_serial_eager'])}"
                             f" | {fmt(drift_self) if sched != 'serial' else '-'} |" + other_cell(fmt(drift_gpu)) +
                             f" {fmt(grad)} |")
    lines += ["", "Relative differences of the loss at step `warmup` (the 6th step from the same seed and weights: "
              "the first replay's, or the eager runs' `loss_trace`). Last column: the first step, taken eagerly before "
              "each mode's measurement in one process, the graph row's against the eager row's." +
              (" The other GPU's: serial eager on this GPU against serial eager on the other, same step." if two
               else "")]
    return lines


def refit_rows(dlsim, tmp, measured):
    """concurrent_kernels_refit's table: each GPU's graph speed-ups simulated over the grid of the two constants."""
    cases = [(g, m, b, sched, pols[0]) for g in measured for m, b, sched, pols in CASES]
    files = {}
    for g in measured:
        for point in refit.GRID + (("defaults",),):
            path = tmp / f"refit-{g}-{'-'.join(map(str, point))}.yaml"
            path.write_text(f"base: {GPUS[g]['hw']}\n" + DEFAULT_CONCURRENT_KERNELS if point == ("defaults",)
                            else refit.overlay(GPUS[g]["hw"], *point))
            files[(g, point)] = path
    runs = ([(g, m, b, "serial", None) for g, m, b, _, _ in cases] +
            [(g, m, b, "serial", refit.GRID[-1]) for g, m, b, _, _ in cases] +  # serial must not depend on them
            [(g, m, b, p, pt) for g, m, b, _, p in cases for pt in refit.GRID + (("defaults",),)])

    def one(g, m, b, policy, point):
        exp, _ = plan(m, b, policy)
        exp.update(hw=str(files[(g, point)]) if point else GPUS[g]["hw"], launch="cuda-graph", sync_every_step=True)
        return dlsim.json(["run"], exp)["iteration_time_us"]
    times = dict(zip(runs, dlsim.parallel([functools.partial(one, *r) for r in runs])))
    simulated, meas, shipped, defaults = {}, {}, {}, {}
    for g, m, b, sched, policy in cases:
        serial = times[(g, m, b, "serial", None)]
        if times[(g, m, b, "serial", refit.GRID[-1])] != serial:
            raise SystemExit(f"concurrency_fidelity: {m} b{b} serial on {g} depends on concurrent_kernels")
        key = (g, m, b)
        simulated[key] = {pt: serial / times[(g, m, b, policy, pt)] for pt in refit.GRID}
        defaults[key] = serial / times[(g, m, b, policy, ("defaults",))]
        meas[key] = measured_speedup(measured[g][0], m, b, sched, "graph")
    for g, m, b, sched, policy in cases:  # the shipped files' constants: the base runs of the speed-up table
        exp, _ = plan(m, b, policy)
        exp.update(hw=GPUS[g]["hw"], launch="cuda-graph", sync_every_step=True)
        shipped[(g, m, b)] = times[(g, m, b, "serial", None)] / dlsim.json(["run"], exp)["iteration_time_us"]
    held = yaml.safe_load(H100_CONCURRENT_KERNELS)["concurrent_kernels"]["gemm_blocks_per_sm"]  # both files'
    return refit.report_rows(simulated, meas, shipped, defaults, held_per_sm=held, model_of=lambda k: k[1],
                             label_of=lambda k: f"{GPUS[k[0]]['name']} | {k[1]} | {k[2]}")


def main():
    def generate(a, binary, tmp):
        gpu = GPUS[a.gpu]
        ok, failed = load_measured(gpu["files"])
        runs = sorted({(m, b, p, launch, hw) for m, b, _, pols in gpu["cases"] for p in ["serial"] + pols
                       for _, launch, _ in MODES for hw in ("base", "diag")})
        files = {"base": gpu["hw"], "diag": tmp / f"{gpu['hw']}-diagnostic-concurrent-kernels.yaml"}
        files["diag"].write_text(f"base: {gpu['hw']}\n" + gpu["diag"][1])
        dlsim = Dlsim(binary, ROOT, a.jobs)
        results = dlsim.parallel([functools.partial(simulate, dlsim, tmp, *r[:4], files[r[4]]) for r in runs])
        sims = dict(zip(runs, results))
        out = {"speedups": "\n".join(speedup_rows(ok, sims, gpu)), "memory": "\n".join(memory_rows(ok, sims, gpu)),
               "measured-spread": "\n".join(spread_rows(ok, failed))}
        if a.gpu == "h200":  # the H100's report checks the cases both GPUs measured, this one all of its own
            out["replay-check"] = "\n".join(replay_rows({"h200": (ok, failed)}, gpu["cases"]))
            steps = {measured_pair(ok, m, b, s, "eager")[1]["warmup"] for m, b, s, _ in gpu["cases"]}
            if len(steps) != 1:
                raise SystemExit(f"concurrency_fidelity: the measurements' warm-ups differ ({sorted(steps)} steps)")
            warmup = steps.pop()
            warm_keys = sorted({(m, b, p) for m, b, _, pols in gpu["cases"] for p in ("serial", pols[0])})
            warm = dict(zip(warm_keys, dlsim.parallel([functools.partial(warmup_run, dlsim, *k, warmup, gpu["hw"])
                                                       for k in warm_keys])))
            out["memory-warmup"] = "\n".join(warmup_rows(ok, sims, warm, gpu))
        if a.gpu == "h100":  # the later GPU's report also holds what needs both
            both = {g: load_measured(GPUS[g]["files"]) for g in ("h200", "h100")}
            out["gpus"] = "\n".join(gpu_rows(both))
            out["replay-check"] = "\n".join(replay_rows(both, CASES))
            out["refit"] = "\n".join(refit_rows(dlsim, tmp, both))
        return out
    return host.report_main("concurrency_fidelity", __doc__, generate,
                            [("--jobs", {"type": int, "default": 2, "help": "dlsim runs at once"}),
                             ("--gpu", {"choices": sorted(GPUS), "default": "h200", "in_command": True,
                                        "help": "whose measurements and hardware file (default h200)"})])


if __name__ == "__main__":
    sys.exit(main())
