#!/usr/bin/env python3
"""dlsim's stream-concurrency speed-ups and memory beside PyTorch's on the lent H200 (issue 30, items 2-3);
results/concurrency/pytorch-h200.md is this script's report.

  validate/torch/concurrency_fidelity.py [--dlsim build/bin/dlsim] [--jobs 2]
                                         [--report results/concurrency/pytorch-h200.md]

Measured (results/fidelity/data/h200-2026-11-27b/, torch_concurrency_reference.py, PyTorch 2.11): torchvision
Inception-v3 at batch 8 and 32 and GoogLeNet at 32, serial and with every inception block's branches on side
streams (`branch-streams`, 5 streams), and ResNet-50 at 32 serial and with each convolution's weight gradient on
a side stream (`dgrad-wgrad`, 2 streams); each in eager mode (the host's clock around a step and its synchronize:
`host_ms_median`) and captured whole into one CUDA graph (CUDA events around one replay, each replay followed by
a synchronize: `device_ms_median`); `max_memory_reserved`/`max_memory_allocated` after the warm-up. A speed-up is
taken within one measurement file (one run of the script), serial's row against the schedule's.

Predicted: the plans of configs/validation/concurrency/ (model, batch, policy, pool pytorch-caching, no swap,
their 3 iterations) with `hw: h200` (the kernel model fitted to PyTorch's kernels on the H200 and PyTorch's eager
host, hw/eager_host_model.h), once with `launch: eager` and once with `launch: cuda-graph`, both with
`sync_every_step: true` (each measured step and each replay was followed by a synchronize). GoogLeNet's plan is
`critical-path`; the measured schedule is branch-parallel, so dlsim's `branch-streams` runs too (the serial
plan with the policy replaced). Nothing here is fitted: the hardware file is used as shipped.
From each run's Chrome trace (its last iteration): the time two or more kernels ran at once, the overlap that
a concurrent schedule can gain from.
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
import fit_host_model as host  # noqa: E402  (emit_report: the generated blocks and their provenance)
from studies.dlsim import Dlsim  # noqa: E402  (the one way the studies run dlsim)

DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-27b"
MEASURED = ["concurrency.json", "concurrency-resnet50-rerun.json"]
PLANS = ROOT / "configs" / "validation" / "concurrency"
HW = "h200"
# A diagnostic, not a fit: the H200 file has no `concurrent_kernels:` section, so it runs on the defaults
# (co_run_slowdown 0, gemm_blocks_per_sm 2, both [A]); the H100 file's values were fitted by `dlsim calibrate` to
# concurrent-convolution micro-benchmarks on a real H100 (the same GH100 die). Each run is repeated with them.
H100_CONCURRENT_KERNELS = "concurrent_kernels:\n  gemm_blocks_per_sm: 1\n  co_run_slowdown: 0.312\n"
MODES = [("eager", "eager", "host_ms_median"), ("graph", "cuda-graph", "device_ms_median")]
# (model, batch, the measured concurrent schedule, dlsim's policies set beside it: the first is the same kind of
# schedule, the others the plan's own where it differs)
CASES = [("inception_v3", 8, "branch-streams", ["branch-streams"]),
         ("inception_v3", 32, "branch-streams", ["branch-streams"]),
         ("googlenet", 32, "branch-streams", ["branch-streams", "critical-path"]),
         ("resnet50", 32, "dgrad-wgrad", ["dgrad-wgrad"])]
MIB = 2 ** 20


def load_measured():
    """{file: {(model, batch, schedule, mode): row}} of the rows that ran, and the rows that did not."""
    ok, failed = {}, []
    for name in MEASURED:
        data = json.loads((DATA / name).read_text())
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
    for name in reversed(MEASURED):  # a rerun supersedes the first call's rows
        rows = ok[name]
        if (model, batch, schedule, mode) in rows and (model, batch, "serial", mode) in rows:
            return name, rows[(model, batch, "serial", mode)], rows[(model, batch, schedule, mode)]
    raise SystemExit(f"concurrency_fidelity: no measured {model} b{batch} serial and {schedule} ({mode}) in one file")


def plan(model, batch, policy):
    """The validation plan as an experiment dict; a policy without a plan of its own is the serial plan with
    `concurrency` replaced (GoogLeNet's branch-streams)."""
    path = PLANS / f"{model}-b{batch}-{policy}.yaml"
    own = path.exists()
    exp = yaml.safe_load((path if own else PLANS / f"{model}-b{batch}-serial.yaml").read_text())
    if not own:
        exp["concurrency"] = policy
    return exp, own


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


def speedup_rows(ok, sims):
    lines = ["| model | batch | measured schedule | dlsim policy | mode | measured serial ms | measured ms | "
             "measured speed-up | dlsim serial ms | dlsim ms | dlsim speed-up | speed-up error | dlsim bound "
             "(host / device busy ms) | dlsim kernels overlapped ms (serial → policy) | dlsim speed-up, H100's "
             "concurrent_kernels | dlsim kernels per step |",
             "|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
    for model, batch, schedule, policies in CASES:
        for mode, launch, field in MODES:
            _, m_serial, m_sched = measured_pair(ok, model, batch, schedule, mode)
            ms_serial, ms_sched = m_serial[field], m_sched[field]
            m_up = ms_serial / ms_sched
            s_serial = sims[(model, batch, "serial", launch, "h200")]
            for policy in policies:
                s = sims[(model, batch, policy, launch, "h200")]
                d_serial, d_sched = s_serial["iteration_time_us"] / 1000.0, s["iteration_time_us"] / 1000.0
                d_up = d_serial / d_sched
                h100_ck = (sims[(model, batch, "serial", launch, "h100-ck")]["iteration_time_us"] /
                           sims[(model, batch, policy, launch, "h100-ck")]["iteration_time_us"])
                lines.append(
                    f"| {model} | {batch} | {schedule} | {policy}{'' if plan(model, batch, policy)[1] else ' ¹'} | "
                    f"{mode} | {ms_serial:.2f} | {ms_sched:.2f} | {m_up:.3f}× | {d_serial:.2f} | {d_sched:.2f} | "
                    f"{d_up:.3f}× | {pct(d_up / m_up - 1)} | {s['bound']} ({s['host_time_us'] / 1000.0:.1f} / "
                    f"{s['device_time_us'] / 1000.0:.1f}) | {s_serial['overlap_ms']:.2f} → {s['overlap_ms']:.2f} | "
                    f"{h100_ck:.3f}× | {s['kernels']} |")
    lines += ["", "Measured: eager `host_ms_median`, graph `device_ms_median` (one replay). dlsim: `iteration_time_us` "
              "on `h200`; *bound* and the busy times are `run --json`'s `bound`, `host_time_us` and "
              "`device_time_us`; the overlap is from the run's Chrome trace. Speed-up error: dlsim's speed-up over "
              "the measured one, less 1. Last column, a diagnostic: the same runs on `h200` with the H100 file's "
              "fitted `concurrent_kernels` (`gemm_blocks_per_sm: 1`, `co_run_slowdown: 0.312`) in place of the "
              "defaults. ¹ no plan of its own: the serial plan with `concurrency: branch-streams`."]
    return lines


def memory_rows(ok, sims):
    lines = ["| model | batch | schedule (dlsim policy) | mode | measured reserved MiB | dlsim reserved MiB | error | "
             "measured Δ reserved over serial MiB | dlsim Δ MiB | measured allocated MiB | dlsim peak live MiB | "
             "error |",
             "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for model, batch, schedule, policies in CASES:
        for sched, pols in (("serial", ["serial"]), (schedule, policies)):
            for mode, launch, _ in MODES:
                _, m_serial, m_sched = measured_pair(ok, model, batch, schedule, mode)
                m = m_serial if sched == "serial" else m_sched
                for policy in pols:
                    s = sims[(model, batch, policy, launch, "h200")]
                    mr, ma = m["max_reserved_bytes"], m["max_allocated_bytes"]
                    dr, dl = s["peak_reserved_bytes"], s["peak_live_bytes"]
                    if sched != "serial":
                        ds = sims[(model, batch, "serial", launch, "h200")]["peak_reserved_bytes"]
                        delta = (f"{(mr - m_serial['max_reserved_bytes']) / MIB:+,.0f} | {(dr - ds) / MIB:+,.0f}")
                    else:
                        delta = "- | -"
                    label = sched if policy == sched else f"{sched} ({policy})"
                    lines.append(f"| {model} | {batch} | {label} | {mode} | {mr / MIB:,.0f} | {dr / MIB:,.0f} | "
                                 f"{pct(dr / mr - 1)} | {delta} | {ma / MIB:,.0f} | {dl / MIB:,.0f} | "
                                 f"{pct(dl / ma - 1)} |")
    lines += ["", "Measured: `torch.cuda.max_memory_reserved()` / `max_memory_allocated()` after the warm-up (graph "
              "rows: over the capture and the replays, the eager warm-up's blocks still cached). dlsim on `h200`: "
              "`peak_reserved_bytes` and `peak_live_bytes` (the live tensors' bytes, without the allocator's "
              "512-byte rounding that `allocated` counts). Δ: the schedule's reserved less serial's, same mode."]
    return lines


def spread_rows(ok, failed):
    lines = ["| file | model | batch | schedule | eager median ms | eager min ms | graph median ms | graph min ms |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for name in MEASURED:
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


def main():
    def generate(a, binary, tmp):
        ok, failed = load_measured()
        runs = sorted({(m, b, p, launch, hw) for m, b, _, pols in CASES for p in ["serial"] + pols
                       for _, launch, _ in MODES for hw in ("h200", "h100-ck")})
        files = {"h200": HW, "h100-ck": tmp / "h200-h100-concurrent-kernels.yaml"}
        files["h100-ck"].write_text(f"base: {HW}\n" + H100_CONCURRENT_KERNELS)
        dlsim = Dlsim(binary, ROOT, a.jobs)
        results = dlsim.parallel([functools.partial(simulate, dlsim, tmp, *r[:4], files[r[4]]) for r in runs])
        sims = dict(zip(runs, results))
        return {"speedups": "\n".join(speedup_rows(ok, sims)), "memory": "\n".join(memory_rows(ok, sims)),
                "measured-spread": "\n".join(spread_rows(ok, failed))}
    return host.report_main("concurrency_fidelity", __doc__, generate,
                            [("--jobs", {"type": int, "default": 2, "help": "dlsim runs at once"})])


if __name__ == "__main__":
    sys.exit(main())
