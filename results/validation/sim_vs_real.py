#!/usr/bin/env python3
"""Simulated against measured, for many runs and hardware files at once: the tables of results/validation/.

For every measured run directory (trace.cuda.json, report.cuda.json, as dlsim-cuda wrote them) and every hardware
file, it writes the simulated twin of the run's experiment with that hardware file (`dlsim validate`, which
without a GPU writes plan.json and trace.sim.json and stops), compares it with the measurement
(`dlsim compare --json`), and prints one Markdown row per (run, hardware file):
iteration time simulated and measured, per-iteration MAPE, per-op MAPE, peak reserved simulated and measured.

  results/validation/sim_vs_real.py --runs DIR... --hw NAME=FILE... [--trace trace.cuda.json] [--report report.cuda.json]
                               [--json OUT.json] [--by-kind]

Each run directory must be named after its experiment in configs/validation/ (e.g. resnet50-b64-cnmem).
Only the Python standard library is used; build/bin/dlsim must exist.
"""
import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from studies.dlsim import Dlsim  # noqa: E402  (the studies' one runner of dlsim)

DLSIM = Dlsim(os.path.join(ROOT, "build", "bin", "dlsim"), ROOT, 1)


def simulate(exp_yaml, hw_file, out_dir, warmup, iterations):
    """The simulated twin of `exp_yaml` with `hw_file`: plan.json and trace.sim.json in out_dir."""
    with open(exp_yaml) as f:
        lines = [l for l in f.read().splitlines() if not l.startswith("hw:")]
    os.makedirs(out_dir, exist_ok=True)
    exp = os.path.join(out_dir, "experiment.yaml")
    with open(exp, "w") as f:
        f.write("\n".join(lines + ["hw: " + os.path.abspath(hw_file)]) + "\n")
    p = DLSIM.run(["validate", exp, "--out", out_dir, "--warmup", warmup, "--iterations", iterations,
                   "--cuda-binary", "/nonexistent"], check=False)
    if p.returncode not in (0, 3) or not os.path.exists(os.path.join(out_dir, "trace.sim.json")):
        sys.exit(f"dlsim validate {exp} failed ({p.returncode}): {p.stderr}")


def compare(sim_dir, real_trace):
    p = DLSIM.run(["compare", os.path.join(sim_dir, "trace.sim.json"), real_trace, "--plan",
                   os.path.join(sim_dir, "plan.json"), "--json"], check=False)
    if p.returncode != 0:
        sys.exit(f"dlsim compare failed: {p.stderr}")
    return json.loads(p.stdout)


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", nargs="+", required=True)
    ap.add_argument("--hw", nargs="+", required=True, help="LABEL=FILE")
    ap.add_argument("--trace", default="trace.cuda.json")
    ap.add_argument("--report", default="report.cuda.json")
    ap.add_argument("--json")
    ap.add_argument("--by-kind", action="store_true", help="also print time per op kind")
    args = ap.parse_args()
    hws = [h.split("=", 1) for h in args.hw]
    rows = []
    work = tempfile.mkdtemp(prefix="dlsim-report-")
    for run in args.runs:
        name = os.path.basename(os.path.normpath(run))
        exp = os.path.join(ROOT, "configs", "validation", name + ".yaml")
        if not os.path.exists(exp):
            sys.exit(f"no experiment {exp} for run {run}")
        with open(os.path.join(run, args.report)) as f:
            report = json.load(f)
        real_trace = os.path.join(run, args.trace)
        for label, hw in hws:
            sim_dir = os.path.join(work, name, label)
            simulate(exp, hw, sim_dir, report["warmup"], report["iterations"])
            c = compare(sim_dir, real_trace)
            its = c["iterations"]
            rows.append({"run": name, "hw": label,
                         "sim_ms": median([i["sim_ns"] for i in its]) / 1e6,
                         "real_ms": median([i["real_ns"] for i in its]) / 1e6,
                         "iteration_mape": c["iteration_mape"], "op_mape": c["op_mape"],
                         "sim_peak_reserved": c["sim_peak_reserved"],
                         "real_peak_reserved": report["peak_reserved_bytes"],
                         "by_kind": c["by_kind"]})
    print("| run | hw | simulated ms | measured ms | iteration MAPE % | per-op MAPE % | peak reserved sim | "
          "measured | error % |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        err = (r["sim_peak_reserved"] - r["real_peak_reserved"]) / r["real_peak_reserved"] * 100
        print(f"| {r['run']} | {r['hw']} | {r['sim_ms']:.2f} | {r['real_ms']:.2f} | {r['iteration_mape']:.1f} | "
              f"{r['op_mape']:.1f} | {r['sim_peak_reserved']:,} | {r['real_peak_reserved']:,} | {err:+.3f} |")
    for label, _ in hws:
        sel = [r for r in rows if r["hw"] == label]
        print(f"\n{label}: mean iteration MAPE {sum(r['iteration_mape'] for r in sel) / len(sel):.1f} %, "
              f"mean per-op MAPE {sum(r['op_mape'] for r in sel) / len(sel):.1f} % over {len(sel)} runs")
    if args.by_kind:
        for r in rows:
            print(f"\n{r['run']} ({r['hw']}): time per iteration by op kind, simulated / measured (us)")
            for k, v in sorted(r["by_kind"].items(), key=lambda kv: -kv[1]["real_ns"]):
                print(f"  {k:22s} {v['sim_ns'] / 1e3:10.0f} {v['real_ns'] / 1e3:10.0f}  MAPE {v['mape']:.1f} %")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
