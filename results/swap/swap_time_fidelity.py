#!/usr/bin/env python3
"""Swap plans on a real GPU against the simulator: section 9 of results/swap/README.md.

The measurement is dlsim-cuda running configs/validation/swap/ on a lent H200 (2026-11-27; the traces are
../shared/data/gpu/h200-2026-11-27/harness-runs.tar.gz, x-swap/): every kernel's and copy's start and end, eager
and captured in a CUDA graph. Two steps:

  swap_time_fidelity.py --extract TARBALL     # once: the traces -> data/h200-harness-swap.json (committed)
  swap_time_fidelity.py [--dlsim build/bin/dlsim] [--readme]   # the tables (Markdown; --readme: into
                                                     # README.md's "generated: real-gpu" block)

--extract keeps, per plan and launch mode, what the comparison needs: the median iteration time and summed
kernel time over the measured iterations after the first, the copies (count, bytes, time per direction and the
fitted rate), and the copy slowdown's data: for each kernel, its time against the same kernel's median in the
no-swap run, and the share of its time a copy overlapped.

The copy slowdown (hardware key concurrent_kernels.copy_slowdown) is fitted from those kernels alone, never
from iteration times: with f a kernel's overlapped share and t0 its no-swap time, the extra kernel time is
s * sum(f * t0), so s = sum(extra) / sum(f * t0), over the plans of one launch mode, and again leaving each
plan out for its own row (the shipped hardware files take the eager fit: PyTorch swaps eagerly). The simulated plans run on hardware files calibrated by `dlsim
calibrate` to the no-swap run of the same harness on the same H200 (data/h200-harness-{eager,graph}.yaml: their
kernel times are that run's, so the comparison is of the swap model, not of the kernel model), with the plans
made as the measured ones were, for the experiments' own `hw: h100-sxm` (`run_hw:` runs them on the H200 file). Only the
Python standard library is used.
"""
import argparse
import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 2, "scripts"))
from studies import blocks  # noqa: E402  (the generated blocks of a README, as scripts/regenerate.py writes them)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DATA = os.path.join(HERE, "data", "h200-harness-swap.json")
# Each plan by the name of its experiment in configs/validation/swap/ (resnet50-b64-NAME.yaml), with the no-swap
# run its overhead is measured against: save-on-cpu's packs make the host wait, which a captured graph cannot,
# so it and its own no-swap twin ran eager only.
PLANS = {"swap-singa-no-overhead": "swap-none", "swap-vdnn": "swap-none", "swap-fastest": "swap-none",
         "swap-singa-stick": "swap-none", "swap-swapadvisor": "swap-none", "eager-save-on-cpu": "eager-none"}
BASELINES = ["swap-none", "eager-none"]
MODES = ["eager", "graph"]


def _copy_overlap(start, end, copies):
    return sum(max(0, min(end, ce) - max(start, cs)) for cs, ce in copies)


def _rate_fit(copies):
    """Least-squares time = latency + bytes / rate over the copies (None with one size only)."""
    xs = [c["bytes"] for c in copies]
    ys = [c["end"] - c["start"] for c in copies]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    vx = sum((x - mx) ** 2 for x in xs)
    if vx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / vx
    return {"gb_per_s": round(1 / b, 2), "latency_us": round((my - b * mx) / 1e3, 2)}


def _summarise(trace, none_kernel_ns):
    its = range(1, len(trace["iterations"]))  # the first measured iteration still warms up
    out = {"iteration_ms": statistics.median(
        (trace["iterations"][i]["end"] - trace["iterations"][i]["start"]) / 1e6 for i in its)}
    kernel, extra, exposure = [], 0.0, 0.0
    for i in its:
        copies = [(c["start"], c["end"]) for c in trace["copies"] if c["iteration"] == i]
        ops = [o for o in trace["ops"] if o["iteration"] == i]
        kernel.append(sum(o["end"] - o["start"] for o in ops) / 1e6)
        for o in ops:
            t0 = none_kernel_ns.get(o["op"])
            if t0 is None:
                continue
            dur = o["end"] - o["start"]
            f = min(1.0, _copy_overlap(o["start"], o["end"], copies) / max(dur, 1))
            extra += dur - t0
            exposure += f * t0
    out["kernel_ms"] = statistics.median(kernel)
    out["slowdown_extra_ms"] = round(extra / 1e6 / len(its), 4)
    out["slowdown_exposure_ms"] = round(exposure / 1e6 / len(its), 4)
    last = len(trace["iterations"]) - 1
    for name, to_host in (("d2h", True), ("h2d", False)):
        c = [x for x in trace["copies"] if x["iteration"] == last and x["to_host"] == to_host]
        out[name] = {"count": len(c), "bytes": sum(x["bytes"] for x in c),
                     "ms": round(sum(x["end"] - x["start"] for x in c) / 1e6, 3)}
        every = [x for x in trace["copies"] if x["iteration"] >= 1 and x["to_host"] == to_host]
        if every:
            out[name]["fit"] = _rate_fit(every)
    return out


def extract(tarball):
    traces = {}
    # The swap runs are a tarball inside the tarball: swap/results.tar.gz, one folder per experiment.
    with tarfile.open(tarball) as outer, tarfile.open(fileobj=outer.extractfile("swap/results.tar.gz")) as tar:
        for m in tar.getmembers():
            parts = m.name.split("/")
            if len(parts) == 3 and parts[2].startswith("trace.") and m.isfile():
                plan = parts[1].replace("resnet50-b64-", "")
                mode = parts[2].split(".")[1]
                if (plan in PLANS or plan in BASELINES) and mode in MODES:
                    traces[(plan, mode)] = json.load(io.TextIOWrapper(tar.extractfile(m)))
    result = {"source": "shared/data/gpu/h200-2026-11-27/harness-runs.tar.gz (x-swap/*/trace.{eager,graph}.json)",
              "device": "NVIDIA H200 (dlsim-cuda, plans of configs/validation/swap/ made with hw: h100-sxm)",
              "plans": {}}
    for mode in MODES:
        for baseline in BASELINES:
            if (baseline, mode) not in traces:
                continue
            per_op = {}
            for o in traces[(baseline, mode)]["ops"]:
                if o["iteration"] >= 1:
                    per_op.setdefault(o["op"], []).append(o["end"] - o["start"])
            none_kernel_ns = {k: statistics.median(v) for k, v in per_op.items()}
            for plan in [baseline] + [p for p, b in PLANS.items() if b == baseline]:
                if (plan, mode) in traces:
                    result["plans"].setdefault(plan, {})[mode] = _summarise(traces[(plan, mode)], none_kernel_ns)
    return result


def fit_copy_slowdown(data, mode="eager", leave_out=None):
    # Only plans whose copies run beside the kernels (on copy streams) say anything about it: save-on-cpu copies
    # on the compute stream, so nothing overlaps (its kernels' own change is in the README).
    plans = [p for p in PLANS if p != leave_out and data["plans"].get(p, {}).get(mode, {}).get(
        "slowdown_exposure_ms", 0) > 0]
    extra = sum(data["plans"][p][mode]["slowdown_extra_ms"] for p in plans)
    exposure = sum(data["plans"][p][mode]["slowdown_exposure_ms"] for p in plans)
    return extra / exposure


def simulate(dlsim, plan, mode, copy_slowdown):
    """The validation experiment of `plan` on the harness-calibrated H200 file for `mode`; iteration ms."""
    with open(os.path.join(ROOT, "configs", "validation", "swap", f"resnet50-b64-{plan}.yaml")) as f:
        lines = [l for l in f.read().splitlines() if not l.startswith(("run_hw:", "launch:"))]
    # The plan is made for the experiment's own hw (h100-sxm), as the plans that ran were; it runs on the H200.
    hw = os.path.join(HERE, "data", f"h200-harness-{mode}.yaml")
    lines += [f"run_hw: {hw}", "launch: " + ("cuda-graph" if mode == "graph" else "eager"),
              f"hw_override: {{concurrent_kernels: {{copy_slowdown: {copy_slowdown:.4f}}}}}"]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write("\n".join(lines) + "\n")
    try:
        p = subprocess.run([dlsim, "run", f.name, "--json"], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        sys.exit(f"dlsim run ({plan}, {mode}) failed ({p.returncode}): {p.stderr}")
    r = json.loads(p.stdout)
    return r["iteration_time_us"] / 1e3, r.get("swap_transfers")


def tables(dlsim):
    with open(DATA) as f:
        data = json.load(f)
    for mode in MODES:
        print(f"copy_slowdown fitted on the {mode} plans' kernels: {fit_copy_slowdown(data, mode):.3f}")
    print()
    for mode in MODES:
        print(f"### {mode}\n")
        print("| plan | copies measured (dlsim) | measured ms | dlsim ms, no copy slowdown | dlsim ms, copy slowdown "
              "fitted without this plan | time error | measured overhead | dlsim overhead | overhead difference |")
        print("|---|---|---|---|---|---|---|---|---|")
        errors, times = [], []
        for plan, baseline in PLANS.items():
            m = data["plans"].get(plan, {}).get(mode)
            if m is None:
                continue
            base_real = data["plans"][baseline][mode]["iteration_ms"]
            base_sim = simulate(dlsim, baseline, mode, 0.0)[0]
            s = fit_copy_slowdown(data, mode, leave_out=plan)
            before, swaps = simulate(dlsim, plan, mode, 0.0)
            after, _ = simulate(dlsim, plan, mode, s)
            real_over = 100 * (m["iteration_ms"] / base_real - 1)
            sim_over = 100 * (after / base_sim - 1)
            errors.append(abs(sim_over - real_over))
            sim_copies = "n/a" if swaps is None else str(swaps)
            times.append(abs(after / m["iteration_ms"] - 1))
            print(f"| {plan} | {m['d2h']['count'] + m['h2d']['count']} ({sim_copies}) | {m['iteration_ms']:.1f} | "
                  f"{before:.1f} | {after:.1f} (s {s:.3f}) | {100 * (after / m['iteration_ms'] - 1):+.1f} % | "
                  f"{real_over:+.1f} % | {sim_over:+.1f} % | {sim_over - real_over:+.1f} points "
                  f"({100 * (sim_over / real_over - 1):+.1f} %) |")
            print(f"| ↳ no swap ({baseline}) | | {base_real:.1f} | {base_sim:.1f} | | "
                  f"{100 * (base_sim / base_real - 1):+.1f} % | | | |")
        print(f"\nswap plans: mean |time error| {100 * statistics.mean(times):.1f} %, largest "
              f"{100 * max(times):.1f} %; mean |overhead difference| {statistics.mean(errors):.1f} points\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--extract", metavar="TARBALL", help="summarise the harness traces into " + DATA)
    ap.add_argument("--dlsim", default=os.path.join(ROOT, "build", "bin", "dlsim"))
    ap.add_argument("--readme", action="store_true", help="write the tables into README.md's real-gpu block")
    a = ap.parse_args()
    if a.extract:
        result = extract(a.extract)
        with open(DATA, "w") as f:
            json.dump(result, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"wrote {DATA}")
        return
    if not a.readme:
        tables(a.dlsim)
        return
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        tables(a.dlsim)
    readme = os.path.join(HERE, "README.md")
    with open(readme) as f:
        doc = f.read()
    doc = blocks.replace(doc, readme, {"real-gpu": text.getvalue()})
    with open(readme, "w") as f:
        f.write(doc)
    print(f"wrote {readme}")


if __name__ == "__main__":
    main()
