#!/usr/bin/env python3
"""The concurrency validation plans as dlsim-cuda ran them on a lent H200, beside the simulator: concurrency.md.

The measurement is dlsim-cuda running configs/validation/concurrency/ (2026-11-28; the traces are
results/fidelity/data/h200-2026-11-28/harness-concurrency.tar.xz): every kernel's start and end and the pool's
peaks, captured in a CUDA graph and eager, 2 warm-ups and 5 measured iterations. Three steps:

  harness_concurrency.py --extract TARBALL      # once: the traces -> data/harness-concurrency.json (committed)
  harness_concurrency.py --calibrate TARBALL    # once: data/h200-harness-conc-{graph,eager}.yaml (committed)
  harness_concurrency.py [--dlsim build/bin/dlsim] [--write]   # the tables (Markdown; --write: into
                                                # concurrency.md's "generated: tables" block)

That is the first measurement, convolutions through cuDNN's legacy calls. `--api graph` takes the second, the same
plans with cuDNN's graph API (dlsim-cuda's default since a9cb265; harness-concurrency-graph-api.tar.xz beside the
first): --extract writes data/harness-concurrency-graph-api.json, and --write fits its two hardware files into a
temporary directory from the committed tarball before simulating (580 KB each, so not committed; --calibrate
--api graph writes them into data/, which .gitignore keeps out) and fills the "generated: tables-graph-api" block.

--extract keeps, per plan and launch mode, what the comparison needs, over the measured iterations after the first
(it still warms up): the median iteration time, the median per-iteration sums of kernel time, of the time two or
more kernels ran at once (kernel overlap) and of the time no kernel ran inside the iteration (device idle: the
host's launch gaps when eager, waits on other streams), and the report's peak reserved and live bytes.

--calibrate fits one hardware file per launch mode with `dlsim calibrate` to the SERIAL plans' runs of that mode
alone (their kernel times, so that the comparison is of the concurrency model, not of the kernel model), from
configs/hw/h200-datasheet.yaml, and appends configs/hw/h200.yaml's shipped `concurrent_kernels` constants
unchanged: nothing is fitted on the concurrent plans. The simulated plans are made as the measured ones were, for
the experiments' own `hw: h100-sxm-harness` (h100-sxm when they ran), and run on the H200 file (`run_hw:`), with
the harness's synchronisation after every iteration (`sync_every_step`). Only the Python standard library is used
(and the dlsim binary).
"""
import argparse
import contextlib
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 3, "scripts"))
from studies import blocks  # noqa: E402  (the generated blocks of a README, as scripts/regenerate.py writes them)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
REPORT = os.path.join(HERE, "concurrency.md")
# The two measurements of the same plans, by the cuDNN API dlsim-cuda's convolutions went through (its
# --cudnn-api): the legacy calls (the first run) and the graph API (its default since a9cb265). Each has its
# tarball, its committed summary and its generated block in concurrency.md. The legacy run's calibrated files are
# committed (data/h200-harness-conc-{graph,eager}.yaml); the graph API's are not (580 KB each): --write fits them
# into a temporary directory from the committed tarball each time (deterministic: dlsim calibrate is).
APIS = {
    "legacy": {"tarball": "results/fidelity/data/h200-2026-11-28/harness-concurrency.tar.xz",
               "data": os.path.join(HERE, "data", "harness-concurrency.json"),
               "hw": "h200-harness-conc-{mode}.yaml", "block": "tables", "committed_hw": True},
    "graph": {"tarball": "results/fidelity/data/h200-2026-11-28/harness-concurrency-graph-api.tar.xz",
              "data": os.path.join(HERE, "data", "harness-concurrency-graph-api.json"),
              "hw": "h200-harness-conc-graph-api-{mode}.yaml", "block": "tables-graph-api", "committed_hw": False},
}
DATA = APIS["legacy"]["data"]
TARBALL = APIS["legacy"]["tarball"]
CONFIGS = os.path.join(ROOT, "configs", "validation", "concurrency")
# Each concurrent plan by its experiment's name in configs/validation/concurrency/, with its serial twin.
PLANS = {}
for _b in (1, 8, 32, 128):
    for _p in ("branch-streams", "ios"):
        PLANS[f"inception_v3-b{_b}-{_p}"] = f"inception_v3-b{_b}-serial"
PLANS["googlenet-b32-critical-path"] = "googlenet-b32-serial"
PLANS["resnet50-b32-dgrad-wgrad"] = "resnet50-b32-serial"
PLANS["resnet50-b32-optimizer-overlap"] = "resnet50-b32-serial"
SERIAL = sorted(set(PLANS.values()))
MODES = ["graph", "eager"]
WARMUP, ITERATIONS = 2, 5  # what the measured runs did (the tarball's reports say so too)


def hw_file(mode, api="legacy", directory=None):
    """The harness-calibrated H200 file of a launch mode for an API's run: in data/ unless `directory` is given."""
    return os.path.join(directory or os.path.join(HERE, "data"), APIS[api]["hw"].format(mode=mode))


# --- the traces -------------------------------------------------------------------------------------------------

def _busy(intervals):
    """(time covered by at least one interval, time covered by two or more), intervals as (start, end)."""
    edges = sorted([(s, 1) for s, e in intervals if e > s] + [(e, -1) for s, e in intervals if e > s])
    one = two = 0
    depth, last = 0, None
    for t, d in edges:
        if last is not None:
            if depth >= 1:
                one += t - last
            if depth >= 2:
                two += t - last
        depth += d
        last = t
    return one, two


def summarise(trace, first=1):
    """The medians over iterations first.. of a trace (dlsim's trace format: iterations, ops in ns)."""
    its = range(first, len(trace["iterations"]))
    if not its:
        raise ValueError(f"trace has {len(trace['iterations'])} iteration(s), none after the first {first}")
    by_it = {i: [] for i in its}
    streams = set()
    for o in trace["ops"]:
        if o["iteration"] in by_it:
            by_it[o["iteration"]].append((o["start"], o["end"]))
            streams.add(o["stream"])
    span, kernel, overlap, idle = [], [], [], []
    for i in its:
        it = trace["iterations"][i]
        ops = by_it[i]
        covered, two = _busy(ops)
        span.append(it["end"] - it["start"])
        kernel.append(sum(e - s for s, e in ops))
        overlap.append(two)
        idle.append(it["end"] - it["start"] - covered)
    ms = lambda xs: round(statistics.median(xs) / 1e6, 4)  # noqa: E731
    return {"iterations": len(its), "ops_per_iteration": len(by_it[its[0]]), "streams": len(streams),
            "iteration_ms": ms(span), "kernel_ms": ms(kernel), "overlap_ms": ms(overlap), "idle_ms": ms(idle)}


def _members(tarball):
    """{(plan, kind, mode): member} for the plan/{trace,report}.{graph,eager}.json files of the tarball."""
    out = {}
    with tarfile.open(tarball) as tar:
        for m in tar.getmembers():
            parts = [p for p in m.name.split("/") if p not in ("", ".")]
            if len(parts) != 2 or not m.isfile():
                continue
            name = parts[1].split(".")
            if len(name) == 3 and name[0] in ("trace", "report") and name[1] in MODES and name[2] == "json":
                out[(parts[0], name[0], name[1])] = m.name
    return out


def extract(tarball, api="legacy"):
    members = _members(tarball)
    result = {"source": APIS[api]["tarball"] + " (PLAN/{trace,report}.{graph,eager}.json)",
              "cudnn_api": api,
              "device": "NVIDIA H200 (dlsim-cuda, plans of configs/validation/concurrency/ made with hw: h100-sxm)",
              "plans": {}}
    with tarfile.open(tarball) as tar:
        load = lambda name: json.load(io.TextIOWrapper(tar.extractfile(name)))  # noqa: E731
        for plan in SERIAL + list(PLANS):
            for mode in MODES:
                if (plan, "trace", mode) not in members:
                    continue
                trace = load(members[(plan, "trace", mode)])
                s = summarise(trace)
                if (plan, "report", mode) in members:
                    r = load(members[(plan, "report", mode)])
                    s["peak_reserved_bytes"] = r["peak_reserved_bytes"]
                    s["peak_live_bytes"] = r["peak_live_bytes"]
                    s["timing"] = r.get("timing", "")
                    if "host_launch_ns_per_iteration" in r:  # eager: the host's time inside the launch calls
                        s["host_launch_ms"] = round(r["host_launch_ns_per_iteration"] / 1e6, 4)
                s["oom"] = bool(trace.get("oom", False))
                result["plans"].setdefault(plan, {})[mode] = s
    missing = [p for p in SERIAL + list(PLANS) if p not in result["plans"]]
    if missing:
        sys.exit(f"{tarball}: no trace for {', '.join(missing)}")
    return result


def _from_chrome(chrome):
    """dlsim run --chrome-trace's events back into the trace format summarise() reads (µs -> ns)."""
    ns = lambda us: int(round(us * 1000))  # noqa: E731
    its, ops = [], []
    for e in chrome["traceEvents"]:
        if e.get("ph") != "X":
            continue
        if e.get("cat") == "iteration":
            its.append((int(e["name"].split()[1]), ns(e["ts"]), ns(e["ts"] + e["dur"])))
        elif e.get("cat") not in ("host", "copy") and e.get("tid", -1) >= 0:
            ops.append({"iteration": e["args"]["iteration"], "stream": e["tid"], "start": ns(e["ts"]),
                        "end": ns(e["ts"] + e["dur"])})
    its.sort()
    return {"iterations": [{"start": s, "end": e} for _, s, e in its], "ops": ops}


# --- the hardware files -----------------------------------------------------------------------------------------

def _block(path, key):
    """The lines of a top-level `key:` block of a YAML file (indented lines after it, comments dropped)."""
    lines, inside = [], False
    with open(path) as f:
        for line in f:
            if line.startswith(key + ":"):
                inside = True
                continue
            if inside:
                if line.strip() and not line.startswith((" ", "#")):
                    break
                body = line.split("#", 1)[0].rstrip()
                if body.strip():
                    lines.append(body)
    return lines


def shipped_concurrent_kernels():
    """configs/hw/h200.yaml's effective concurrent_kernels keys (its base's, then its own), in file order."""
    keys = {}
    for name in ("h200-fitted.yaml", "h200.yaml"):  # h200.yaml says `base: h200-fitted`; its own keys win
        for line in _block(os.path.join(ROOT, "configs", "hw", name), "concurrent_kernels"):
            k, v = line.strip().split(":", 1)
            keys[k.strip()] = v.strip()
    return keys


def _dlsim(dlsim, args, what, ok=(0,)):
    # From the repository root, so that the paths dlsim writes into its outputs are the repository's own.
    p = subprocess.run([os.path.abspath(dlsim)] + args, capture_output=True, text=True, cwd=ROOT)
    if p.returncode not in ok:
        sys.exit(f"dlsim {' '.join(args[:1])} ({what}) failed ({p.returncode}): {p.stderr}{p.stdout}")
    return p.stdout


def calibrate(tarball, dlsim, api="legacy", directory=None):
    members = _members(tarball)
    ck = shipped_concurrent_kernels()
    with tempfile.TemporaryDirectory() as tmp, tarfile.open(tarball) as tar:
        for mode in MODES:
            dirs = []
            for plan in SERIAL:
                d = os.path.join(tmp, f"{plan}-{mode}")
                # The plan that ran: the experiment as it is (hw: h100-sxm-harness), as prepare_validation.sh made it.
                _dlsim(dlsim, ["validate", os.path.join(CONFIGS, plan + ".yaml"), "--out", d, "--warmup", str(WARMUP),
                               "--iterations", str(ITERATIONS), "--cuda-binary", os.path.join(tmp, "none")],
                       plan, ok=(0, 3))  # 3: no GPU backend here, the plan is written all the same
                if not os.path.exists(os.path.join(d, "plan.json")):
                    sys.exit(f"dlsim validate wrote no {d}/plan.json")
                for kind in ("trace", "report"):
                    with tar.extractfile(members[(plan, kind, mode)]) as src, \
                            open(os.path.join(d, f"{kind}.cuda.json"), "wb") as dst:
                        shutil.copyfileobj(src, dst)
                dirs.append(d)
            out = os.path.join(tmp, f"{mode}.yaml")
            _dlsim(dlsim, ["calibrate"] + dirs + ["--hw", "configs/hw/h200-datasheet.yaml", "--out", out],
                   "calibrate " + mode)
            with open(out) as f:
                body = f.read()
            body = "\n".join(f"description: NVIDIA H200 as the dlsim-cuda harness ran it ({mode}), kernel times "
                             "calibrated to its serial concurrency plans" if l.startswith("description:") else l
                             for l in body.split("\n"))
            header = (
                f"# The H200 as dlsim-cuda ran the concurrency plans of configs/validation/concurrency/ ({mode}: "
                f"dlsim-cuda run{' --cuda-graph' if mode == 'graph' else ''}\n"
                f"# on a lent H200, 2026-11-28, convolutions through cuDNN's {api} API; {APIS[api]['tarball']}):\n"
                f"# kernel times are the SERIAL plans' ({', '.join(SERIAL)}),\n"
                f"# fitted by results/validation/h200/harness_concurrency.py --calibrate --api {api}, which for each"
                " runs\n"
                "#   dlsim validate configs/validation/concurrency/PLAN.yaml --out DIR --warmup 2 --iterations 5"
                "   (plan.json; no GPU)\n"
                f"#   cp PLAN/trace.{mode}.json DIR/trace.cuda.json; cp PLAN/report.{mode}.json DIR/report.cuda.json\n"
                "# then dlsim calibrate DIR... --hw configs/hw/h200-datasheet.yaml --out THIS_FILE, and appends the\n"
                "# concurrent_kernels constants configs/hw/h200.yaml ships (not fitted on these runs).\n")
            tail = ("\n# configs/hw/h200.yaml's concurrent_kernels (the H100's fitted values, carried over), unchanged.\n"
                    "concurrent_kernels:\n" + "".join(f"  {k}: {v}\n" for k, v in ck.items()))
            if "\nconcurrent_kernels:" in body:
                sys.exit(f"dlsim calibrate wrote concurrent_kernels into {out}; this script expects it not to")
            with open(hw_file(mode, api, directory), "w") as f:
                f.write(header + body + tail)
            print(f"wrote {hw_file(mode, api, directory)}", file=sys.stderr)


# --- the simulation and the tables ------------------------------------------------------------------------------

# A diagnostic, not a fit of these runs: results/concurrency/pytorch-h100.md refits co_run_slowdown alone on PyTorch's
# own branch-parallel and dgrad-wgrad CUDA-graph speed-ups on both lent GPUs (0.60; the shipped files keep 0.312).
CO_RUN_REFIT = 0.60


def harness_experiment(text, mode, hw, co_run_slowdown=None):
    """An experiment file's text as the simulated twin of the harness's run of it in `mode` on the file `hw`."""
    lines = [l for l in text.splitlines()
             if not l.startswith(("run_hw:", "launch:", "sync_every_step:", "first_step:", "hw_override:"))]
    # Made for the experiment's own hw (h100-sxm-harness), as the plans that ran were; run on the H200 file. The
    # harness synchronises the device after every iteration (and every replay), so the simulated host waits too.
    # It allocates every persistent tensor (weights, momentum) before its first iteration, as dlsim validate's plan
    # says: not PyTorch's lazy first step (experiment/first_step.h), which eager pytorch-caching runs take by default
    # and which carved Inception-v3 b8's momentum buffers from cached activation blocks (serial 1,176 -> 1,122 MiB).
    lines += [f"run_hw: {hw}", "launch: " + ("cuda-graph" if mode == "graph" else "eager"),
              "sync_every_step: true", "first_step: preallocated"]
    # Nor does it give cuBLAS a pool workspace (cublasCreate, no cublasSetWorkspace): the calibrated files carry the
    # datasheet's 32 + 1 MiB (PyTorch's), pinned to none as configs/validation/*.yaml pin them for the H100 study.
    override = "memory: {cublas_workspace_kib: 0, cublaslt_workspace_kib: 0}"
    if co_run_slowdown is not None:
        override += f", concurrent_kernels: {{co_run_slowdown: {co_run_slowdown}}}"
    lines.append(f"hw_override: {{{override}}}")
    return "\n".join(lines) + "\n"


def simulate(dlsim, plan, mode, co_run_slowdown=None, hw=None):
    """The plan's experiment on the harness-calibrated H200 file for `mode`: its --json result and trace summary."""
    with open(os.path.join(CONFIGS, plan + ".yaml")) as f:
        text = harness_experiment(f.read(), mode, hw or hw_file(mode), co_run_slowdown)
    with tempfile.TemporaryDirectory() as d:
        exp, chrome = os.path.join(d, plan + ".yaml"), os.path.join(d, "trace.json")
        with open(exp, "w") as f:
            f.write(text)
        r = json.loads(_dlsim(dlsim, ["run", exp, "--json", "--chrome-trace", chrome], f"{plan}, {mode}"))
        with open(chrome) as f:
            s = summarise(_from_chrome(json.load(f)), first=len(r["iteration_times_us"]) - 1
                          if "iteration_times_us" in r else 1)
    s["iteration_ms"] = r["iteration_time_us"] / 1e3  # the steady (last) iteration
    s["peak_reserved_bytes"] = r["peak_reserved_bytes"]
    s["peak_live_bytes"] = r["peak_live_bytes"]
    s["host_ms"] = r["host_time_us"] / 1e3
    return s


def pct(a, b):
    return 100 * (a / b - 1)


def rows(data, sims, mode):
    """Per concurrent plan: measured and simulated speed-up and peak reserved, with the diagnostics."""
    out = []
    for plan, serial in PLANS.items():
        m, ms_ = data["plans"][plan][mode], data["plans"][serial][mode]
        s, ss = sims[(plan, mode)], sims[(serial, mode)]
        out.append({"plan": plan, "m": m, "s": s, "ms": ms_, "ss": ss,
                    "m_speedup": ms_["iteration_ms"] / m["iteration_ms"],
                    "s_speedup": ss["iteration_ms"] / s["iteration_ms"]})
    return out


def tables(dlsim, api="legacy"):
    with open(APIS[api]["data"]) as f:
        data = json.load(f)
    with tempfile.TemporaryDirectory() as tmp:
        directory = None
        if not APIS[api]["committed_hw"]:  # fitted here, from the committed tarball, into a directory thrown away
            directory = tmp
            calibrate(os.path.join(ROOT, APIS[api]["tarball"]), dlsim, api, directory)
        hw = {mode: hw_file(mode, api, directory) for mode in MODES}
        sims = {(p, mode): simulate(dlsim, p, mode, hw=hw[mode]) for mode in MODES for p in SERIAL + list(PLANS)}
        refit = {(p, mode): simulate(dlsim, p, mode, CO_RUN_REFIT, hw=hw[mode])["iteration_ms"]
                 for mode in MODES for p in SERIAL + list(PLANS)}
    print_tables(data, sims, refit)


def print_tables(data, sims, refit):
    mib = lambda b: b / 2**20  # noqa: E731
    for mode in MODES:
        print(f"### {'CUDA graph (launch: cuda-graph)' if mode == 'graph' else 'eager (launch: eager)'}\n")
        print("| plan | measured ms (serial) | dlsim ms (serial) | measured speed-up | dlsim speed-up | speed-up error "
              "| measured reserved MiB (serial) | dlsim reserved MiB (serial) | reserved error "
              f"| diagnostic: dlsim speed-up, co_run_slowdown {CO_RUN_REFIT} |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        sp_err, res_err, refit_err = [], [], []
        for r in rows(data, sims, mode):
            m, s, ms_, ss = r["m"], r["s"], r["ms"], r["ss"]
            e_sp = pct(r["s_speedup"], r["m_speedup"])
            e_res = pct(s["peak_reserved_bytes"], m["peak_reserved_bytes"])
            sp_err.append(abs(e_sp))
            res_err.append(abs(e_res))
            r_sp = refit[(PLANS[r["plan"]], mode)] / refit[(r["plan"], mode)]
            refit_err.append(abs(pct(r_sp, r["m_speedup"])))
            print(f"| {r['plan']} | {m['iteration_ms']:.2f} ({ms_['iteration_ms']:.2f}) | {s['iteration_ms']:.2f} "
                  f"({ss['iteration_ms']:.2f}) | {r['m_speedup']:.3f}× | {r['s_speedup']:.3f}× | {e_sp:+.1f} % | "
                  f"{mib(m['peak_reserved_bytes']):,.0f} ({mib(ms_['peak_reserved_bytes']):,.0f}) | "
                  f"{mib(s['peak_reserved_bytes']):,.0f} ({mib(ss['peak_reserved_bytes']):,.0f}) | {e_res:+.1f} % | "
                  f"{r_sp:.3f}× ({pct(r_sp, r['m_speedup']):+.1f} %) |")
        serial_t = [abs(pct(sims[(p, mode)]["iteration_ms"], data["plans"][p][mode]["iteration_ms"])) for p in SERIAL]
        serial_r = [abs(pct(sims[(p, mode)]["peak_reserved_bytes"], data["plans"][p][mode]["peak_reserved_bytes"]))
                    for p in SERIAL]
        print(f"\n{mode}: |speed-up error| mean {statistics.mean(sp_err):.1f} %, largest {max(sp_err):.1f} %; "
              f"|peak reserved error| mean {statistics.mean(res_err):.1f} %, largest {max(res_err):.1f} % "
              f"({len(sp_err)} concurrent plans). The serial runs the file was calibrated to: iteration time "
              f"|error| mean {statistics.mean(serial_t):.1f} %, largest {max(serial_t):.1f} %; peak reserved mean "
              f"{statistics.mean(serial_r):.1f} %, largest {max(serial_r):.1f} %. Diagnostic, co_run_slowdown "
              f"{CO_RUN_REFIT}: |speed-up error| mean {statistics.mean(refit_err):.1f} %, largest "
              f"{max(refit_err):.1f} %.\n")
        print("Per iteration, measured / dlsim (ms): kernel time summed over streams (its change from serial), time "
              "two or more kernels ran at once, time no kernel ran inside the iteration"
              + (", and the host's time issuing the launches (measured: inside dlsim-cuda's launch calls; dlsim: "
                 "`host_time_us`)" if mode == "eager" else "") + ".\n")
        host = mode == "eager"
        print("| plan | streams | kernel time | kernel time vs serial | kernel overlap | device idle | idle, serial |"
              + (" host launch time | host, serial |" if host else ""))
        print("|---|---|---|---|---|---|---|" + ("---|---|" if host else ""))
        for r in rows(data, sims, mode):
            m, s, ms_, ss = r["m"], r["s"], r["ms"], r["ss"]
            print(f"| {r['plan']} | {m['streams']} | {m['kernel_ms']:.2f} / {s['kernel_ms']:.2f} | "
                  f"{pct(m['kernel_ms'], ms_['kernel_ms']):+.1f} % / {pct(s['kernel_ms'], ss['kernel_ms']):+.1f} % | "
                  f"{m['overlap_ms']:.2f} / {s['overlap_ms']:.2f} | {m['idle_ms']:.2f} / {s['idle_ms']:.2f} | "
                  f"{ms_['idle_ms']:.2f} / {ss['idle_ms']:.2f} |"
                  + (f" {m['host_launch_ms']:.2f} / {s['host_ms']:.2f} | {ms_['host_launch_ms']:.2f} / "
                     f"{ss['host_ms']:.2f} |" if host else ""))
        print()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--api", choices=sorted(APIS), default="legacy",
                    help="which measurement: dlsim-cuda's convolutions through cuDNN's legacy calls or graph API")
    ap.add_argument("--extract", metavar="TARBALL", help="summarise the harness traces into the API's data JSON")
    ap.add_argument("--calibrate", metavar="TARBALL", help="fit the per-mode hardware files to the serial runs")
    ap.add_argument("--dlsim", default=os.path.join(ROOT, "build", "bin", "dlsim"))
    ap.add_argument("--write", action="store_true", help="write the tables into concurrency.md's generated block")
    a = ap.parse_args()
    out = APIS[a.api]["data"]
    if a.extract:
        result = extract(a.extract, a.api)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {out}")
        return
    if a.calibrate:
        calibrate(a.calibrate, a.dlsim, a.api)
        return
    if not a.write:
        tables(a.dlsim, a.api)
        return
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        tables(a.dlsim, a.api)
    with open(REPORT) as f:
        doc = f.read()
    doc = blocks.replace(doc, REPORT, {APIS[a.api]["block"]: text.getvalue()})
    with open(REPORT, "w") as f:
        f.write(doc)
    print(f"wrote {REPORT}")


if __name__ == "__main__":
    main()
