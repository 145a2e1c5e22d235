#!/usr/bin/env python3
"""How the H200's kernel model prices the LLMs' kernels measured on the lent H200 (issue 28, items 1 and 5):
held out first, then fitted with them; results/fidelity/llm-kernels.md is this script's report.

  validate/torch/llm_kernel_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity/llm-kernels.md]

Measured: results/fidelity/data/h200-2026-11-28b/kernels-graph-llm.json (kernel_sweep.py --timing graph: each
kernel 20 times in one CUDA graph, the replay's time / 20, the device's time without PyTorch's dispatch): 131 of
the 312 planned records before its time budget ran out, Qwen2.5-0.5B's GEMMs at batch 4 (8,192 tokens) forward,
dgrad and wgrad in fp32, TF32 and bf16 (its 151,936-wide LM head among them), the three LLMs' causal attention and
six random ones, six memory-bound ops at six sizes in fp32 and bf16. The planned GPT-2 shapes (its unaligned
50,257-wide vocabulary) and Llama 3.2 1B's were not reached.

Predicted, per record (`dlsim fit-kernels --predictions`, the sample priced through the simulator's own cost model):
- held out: `dlsim fit-kernels` on the event-timed sweeps (ship_hw_files.EVENT_SWEEPS: the 2026-11-27 sweep and,
  since session 12, the grouped/depthwise and seed-7 random ones) and the H200's CNN profiler traces over
  h200-datasheet (ship_hw_files.py's fit without the graph-timed LLM sweeps, which measured the same shapes twice,
  written to build/llm-kernels/); before session 12 that was h200-fitted.yaml before the LLM refit byte for byte
  but for its --out;
- k-fold after: both sweeps fitted together without traces over h200-datasheet, each record predicted by a fit to
  the other four folds by shape (the form whose k-fold error `--report` defines; the shipped fit adds the traces);
- in-sample after: configs/hw/h200-fitted.yaml as shipped (both sweeps and the traces).
Error: predicted / measured - 1; |e| median and 90th percentile (the fit's own interpolation), the signed median,
and the sum of predicted over the sum of measured time less 1 (what a step made of the group's kernels would be
off by).
"""
import json
import pathlib
import statistics
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402  (report_main, Dlsim)
import ship_hw_files as ship  # noqa: E402  (the shipped fit's inputs)

LLM_SWEEP = str(ship.step_fidelity.LLM_SWEEP.relative_to(ROOT))
WORK = ROOT / "build" / "llm-kernels"
VOCAB = 151936  # Qwen2.5-0.5B's vocabulary: the LM head's N (forward), K (dgrad) or M / N (wgrad)


def predictions(dlsim, sweeps, hw, name):
    """The samples of `sweeps` with their predicted times, `hw` the base (`before_us` is its pricing)."""
    out = WORK / f"{name}.yaml"
    pred = WORK / f"{name}-predictions.json"
    cmd = [dlsim.binary, "fit-kernels", *sweeps, "--hw", str(hw), "--out", str(out.relative_to(ROOT)),
           "--predictions", str(pred.relative_to(ROOT))]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    if r.returncode != 0:
        raise SystemExit(f"llm_kernel_fidelity: {' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(pred.read_text())["samples"]


def gemm_pass(s):
    return s.get("src", "").rsplit(":", 1)[-1] if s["op"] == "gemm" else ""


def groups(s):
    """The rows a sample counts in: its class, and for a GEMM its pass and whether it is the LM head's."""
    g = [s["class"]]
    if s["op"] == "gemm":
        g.append(f"{s['class']} {gemm_pass(s)}")
        if VOCAB in (s["m"], s["n"], s["k"]):
            g.append(f"{s['class']} LM head" + (" (K = vocabulary: dgrad)" if s["k"] == VOCAB else ""))
        else:
            g.append(f"{s['class']} not the LM head")
    return g


def p90(v):
    v = sorted(v)
    pos = 0.9 * (len(v) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


def errors(pairs):
    """'median / p90 |e| | signed median' of (predicted, measured) pairs, in percent."""
    e = [p / m - 1 for p, m in pairs]
    a = [abs(x) for x in e]
    return f"{100 * statistics.median(a):.1f} / {100 * p90(a):.1f} | {100 * statistics.median(e):+.1f}"


def summary(pairs):
    """errors(pairs) and the error of their sum, in percent."""
    total = sum(p for p, _ in pairs) / sum(m for _, m in pairs) - 1
    return f"{errors(pairs)} | {100 * total:+.1f}"


def llm_samples(dlsim):
    """Each LLM sample with its held-out, k-fold and in-sample predictions (keyed by its record fields)."""
    WORK.mkdir(parents=True, exist_ok=True)
    without = f"{WORK.relative_to(ROOT)}/h200-fitted-without-llm.yaml"
    # Held out: the event-timed sweeps only (the 2026-11-28c graph sweep measured the same LLM shapes again).
    ship.fit_kernels(dlsim, "h200", "h200-datasheet", "h200-fitted", sweeps=ship.EVENT_SWEEPS, out=without)
    held = predictions(dlsim, [LLM_SWEEP], ROOT / without, "held-out")
    inside = predictions(dlsim, [LLM_SWEEP], ROOT / "configs" / "hw" / "h200-fitted.yaml", "in-sample")
    both = predictions(dlsim, ship.SWEEPS, "h200-datasheet", "both-sweeps")
    at = ship.SWEEPS.index(LLM_SWEEP)  # the LLM sweep's records follow the sweeps before it in the joined records
    first = sum(len(json.loads((ROOT / f).read_text())["records"]) for f in ship.SWEEPS[:at])
    last = first + len(json.loads((ROOT / LLM_SWEEP).read_text())["records"])
    kfold = [s for s in both if first <= s["record"] < last]
    if not (len(held) == len(inside) == len(kfold)):
        raise SystemExit("llm_kernel_fidelity: the three fits took different samples of the LLM sweep")
    rows = []
    for h, i, k in zip(held, inside, kfold):
        if h["record"] != i["record"] or h["record"] != k["record"] - first:
            raise SystemExit(f"llm_kernel_fidelity: record {h['record']} is not the same sample in every fit")
        rows.append(dict(h, held=h["before_us"], kfold=k["kfold_us"], inside=i["before_us"]))
    return rows


def class_table(rows):
    keys = sorted({g for r in rows for g in groups(r)})
    out = ["| class / group | n | measured ms | held out: \\|e\\| median / p90 | signed median | sum | "
           "k-fold after: \\|e\\| median / p90 | signed median | sum | in-sample after: \\|e\\| median / p90 | "
           "signed median | sum |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for key in keys:
        rs = [r for r in rows if key in groups(r)]
        ms = sum(r["measured_us"] for r in rs) / 1e3
        cols = [summary([(r[c], r["measured_us"]) for r in rs]) for c in ("held", "kfold", "inside")]
        out.append(f"| {key} | {len(rs)} | {ms:,.2f} | " + " | ".join(cols) + " |")
    return out


def gemm_table(rows):
    out = ["| dtype | pass | M | N | K | measured µs | held out | k-fold after | in-sample after |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["op"] != "gemm":
            continue
        cells = [f"{r[c]:,.1f} ({100 * (r[c] / r['measured_us'] - 1):+.1f} %)" for c in ("held", "kfold", "inside")]
        out.append(f"| {r['dtype']} | {gemm_pass(r)} | {r['m']:,} | {r['n']:,} | {r['k']:,} | "
                   f"{r['measured_us']:,.1f} | " + " | ".join(cells) + " |")
    return out


def main():
    def generate(_, binary, tmp):
        dlsim = host.Dlsim(binary, tmp)
        rows = llm_samples(dlsim)
        return {"classes": "\n".join(class_table(rows)), "gemms": "\n".join(gemm_table(rows))}
    return host.report_main("llm_kernel_fidelity", __doc__, generate)


if __name__ == "__main__":
    sys.exit(main())
