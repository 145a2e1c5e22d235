#!/usr/bin/env python3
"""Shapes no fit has seen: the H200's seeded random sweep of session 12 (seed 7) priced by the event-timed kernel
model fitted without it, per class (issue 28, item 1; results/fidelity/kernels-seed7-heldout.md is this report).

  validate/torch/kernel_sweep_heldout.py [--dlsim build/bin/dlsim] [--report results/fidelity/kernels-seed7-heldout.md]

Measured: results/fidelity/data/h200-2026-11-28c/kernels-random-seed7.json (kernel_sweep.py --seed 7 --random 60
--random-gemms 30 --random-sdpa 4, CUDA events around one call, median of 7 after 2 warm-ups), 536 records whose
shapes are in no earlier sweep (the memory-bound ops' six sizes aside, which every sweep repeats).

Predicted, per record, by two event-timed fits over h200-datasheet (`dlsim fit-kernels` without traces, the form
whose k-fold error results/fidelity/kernels-report.md defines):
- 11-27: the 2026-11-27 sweep alone (results/fidelity/h200-2026-11-27-kernels.json, the k-fold report's fit);
- 11-27 + grouped: with session 12's grouped and depthwise convolutions (h200-2026-11-28c/kernels-grouped.json).
The fits' fixed costs hold PyTorch's dispatch, as the seed-7 timings do, so each is priced as timed: the fitted
file with `fixed_includes_dispatch` left out (else the simulator prices device time, kernel_terms.h), handed to
`dlsim fit-kernels SEED7 --hw FILE --predictions P`, whose `before_us` is that file's pricing of each record through
the simulator's own cost model. The seed-7 sweep's own records fit nothing here.
Error: predicted / measured - 1; |e| median and 90th percentile, signed median.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import llm_kernel_fidelity as llm_kernels  # noqa: E402  (the error summary both reports print)
DATA = "results/fidelity/data/h200-2026-11-28c"
BASE_SWEEP = "results/fidelity/h200-2026-11-27-kernels.json"
GROUPED = f"{DATA}/kernels-grouped.json"
SEED7 = f"{DATA}/kernels-random-seed7.json"
FITS = [("11-27", [BASE_SWEEP]), ("11-27 + grouped", [BASE_SWEEP, GROUPED])]
WORK = "build/kernel-heldout"


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"kernel_sweep_heldout: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return r.stdout


def as_timed(fitted, out):
    """`fitted` (an event-timed fit) pricing what its sweep timed: without fixed_includes_dispatch, its classes'
    fixed costs are taken whole."""
    lines = (ROOT / fitted).read_text().splitlines(keepends=True)
    kept = [l for l in lines if l.strip() != "fixed_includes_dispatch: true"]
    if len(kept) != len(lines) - 1:
        raise SystemExit(f"kernel_sweep_heldout: {fitted}: expected one 'fixed_includes_dispatch: true' line")
    (ROOT / out).write_text("".join(kept))


def heldout(dlsim, label, sweeps):
    """The seed-7 samples with the prediction of the fit to `sweeps`."""
    stem = label.replace(" + ", "-")
    fitted, timed = f"{WORK}/{stem}.yaml", f"{WORK}/{stem}-as-timed.yaml"
    run([dlsim, "fit-kernels", *sweeps, "--hw", "h200-datasheet", "--out", fitted])
    as_timed(fitted, timed)
    pred = f"{WORK}/seed7-by-{stem}.json"
    run([dlsim, "fit-kernels", SEED7, "--hw", timed, "--out", f"{WORK}/seed7-refit.yaml", "--predictions", pred])
    return json.loads((ROOT / pred).read_text())["samples"]


def spread(rows):
    s = [(r["us"] - r["us_min"]) / r["us"] for r in rows if r.get("us_min")]
    return f"{100 * statistics.median(s):.1f}" if s else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlsim", default=str(ROOT / "build" / "bin" / "dlsim"))
    ap.add_argument("--report", default="results/fidelity/kernels-seed7-heldout.md")
    a = ap.parse_args()
    if not os.access(a.dlsim, os.X_OK):
        print(f"kernel_sweep_heldout: {a.dlsim}: no dlsim binary (scripts/build.sh, or --dlsim PATH)", file=sys.stderr)
        return 2
    (ROOT / WORK).mkdir(parents=True, exist_ok=True)
    fits = {label: heldout(a.dlsim, label, sweeps) for label, sweeps in FITS}
    first = fits[FITS[0][0]]
    for label, samples in fits.items():
        if [s["record"] for s in samples] != [s["record"] for s in first]:
            raise SystemExit(f"kernel_sweep_heldout: the fit '{label}' took other samples of the seed-7 sweep")
    records = json.loads((ROOT / SEED7).read_text())["records"]
    classes = sorted({s["class"] for s in first})
    commit = run(["git", "rev-parse", "--short", "HEAD"]).strip()
    out = ["# Held out: the seed-7 random shapes priced by the kernel model fitted without them",
           "",
           f"Written by `validate/torch/kernel_sweep_heldout.py --dlsim {os.path.relpath(a.dlsim, ROOT)} --report "
           f"{a.report}` at commit {commit} (the script's docstring says what each column is). Measured: `{SEED7}`, "
           f"{len(records)} records, event-timed on the lent H200 of 2026-11-28 (session 12); predicted by "
           "event-timed fits that never saw them, priced as timed (dispatch held in the fixed costs).",
           "",
           "Absolute percentage error, median / 90th percentile, and the signed median; *spread*: the median of "
           "(us - us_min) / us of the seed-7 records themselves.",
           "",
           "| class | n | spread | " + " | ".join(f"{l}: \\|e\\| median / p90 | signed" for l, _ in FITS) + " |",
           "|---|---:|---:|" + "---:|---:|" * len(FITS)]
    for cls in classes + ["all"]:
        idx = [i for i, s in enumerate(first) if cls in ("all", s["class"])]
        # A flash-attention backward's sample is a difference of two records: no spread of its own.
        rows = [records[first[i]["record"]] for i in idx if not first[i]["class"].startswith("sdpa_bwd")]
        cols = [llm_kernels.errors([(fits[l][i]["before_us"], fits[l][i]["measured_us"]) for i in idx]) for l, _ in FITS]
        name = f"**{cls}**" if cls == "all" else cls
        out.append(f"| {name} | {len(idx)} | {spread(rows)} | " + " | ".join(cols) + " |")
    met = {l: sum(1 for c in classes if statistics.median(
        abs(fits[l][i]["before_us"] / fits[l][i]["measured_us"] - 1) for i, s in enumerate(first) if s["class"] == c)
        <= 0.10) for l, _ in FITS}
    out += ["", "Classes whose held-out median is 10 % or less: " +
            ", ".join(f"{l} {met[l]} of {len(classes)}" for l, _ in FITS) + "."]
    (ROOT / a.report).write_text("\n".join(out) + "\n")
    print(f"wrote {a.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
