#!/usr/bin/env python3
"""The tables of results/memory-saving.md: for VGG-16, ResNet-50, ResNet-152, BERT-base and GPT-2 small on the
h100-sxm, every memory-saving policy (swap, recompute, hybrid) at the batches of results/swap.md, and the largest
batch each fits on 80 GB and on 16 GB (`dlsim fit`).

Each point is one `dlsim run --json` (the JSON has the recomputation figures runs.csv lacks); the raw results go
to results/memory-saving/runs.json and fit.json, and the markdown tables are printed.

Usage: scripts/memory_saving_tables.py [--dlsim build/bin/dlsim] [--jobs 2] [--no-fit] [--models a,b]
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

GB = 1e9
MODELS = [("vgg16", 64), ("resnet50", 64), ("resnet152", 32), ("bert-base", 32), ("gpt2-small", 8)]
BLOCKS = {"resnet50", "resnet152", "bert-base", "gpt2-small"}  # models whose builders mark blocks (checkpoint every K)


def policies(model):
    out = [("none", "none")]
    for f in (0.7, 0.5):
        out.append((f"fastest-under-limit {f}", {"name": "fastest-under-limit", "limit_fraction": f}))
    if model in BLOCKS:
        out.append(("checkpoint every 1", {"name": "checkpoint", "every": 1}))
        out.append(("checkpoint every 2", {"name": "checkpoint", "every": 2}))
    out.append(("sqrt", "sqrt"))
    for f in (0.7, 0.5, 0.3):
        out.append((f"dtr {f}", {"name": "dtr", "limit_fraction": f}))
    for f in (0.7, 0.5, 0.3):
        out.append((f"capuchin {f}", {"name": "capuchin", "limit_fraction": f}))
    if model == "vgg16":  # the only one of the five within checkmate's max_ops (127 ops)
        out.append(("checkmate 0.95", {"name": "checkmate", "limit_fraction": 0.95, "time_limit_s": 120}))
    return out


def fit_policies(model, capacity_mib):
    limit = int(capacity_mib * 0.9)  # budget-driven policies aim at 90 % of the device: the pool needs room beside
    out = [("none", "none"), ("fastest-under-limit", {"name": "fastest-under-limit", "limit_mb": limit})]
    out.append(("checkpoint every 1", {"name": "checkpoint", "every": 1}) if model in BLOCKS else ("sqrt", "sqrt"))
    out.append(("dtr", {"name": "dtr", "limit_mb": limit}))
    out.append(("capuchin", {"name": "capuchin", "limit_mb": limit}))
    return out


def experiment(model, batch, swap, override=None):
    e = {"model": model, "batch": batch, "hw": "h100-sxm", "pool": "pytorch-caching", "swap": swap,
         "concurrency": "serial", "iterations": 3}
    if override:
        e["hw_override"] = override
    return e


def run(dlsim, args, exp):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        json.dump(exp, f)  # JSON is YAML
        path = f.name
    try:
        p = subprocess.run([dlsim] + args + [path, "--json"], capture_output=True, text=True)
        if p.returncode not in (0, 3):
            return {"error": (p.stderr or p.stdout).strip().splitlines()[-1] if (p.stderr or p.stdout) else "failed"}
        out = json.loads(p.stdout)
        out.pop("sim_wall_ms", None)  # the host's wall time: the only figure that differs between two runs
        return out
    finally:
        os.unlink(path)


def front(runs, chosen):
    """results/memory-saving/front.{png,svg}: iteration time against peak live memory, one panel per model, one
    colour per policy (scripts/plot_style.py), the budget-driven policies' points joined in order of budget."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import plot_style  # noqa: E402  (sets the deterministic matplotlib backend and options)
    plt = plot_style.plt
    cols = min(3, len(chosen))
    rows = (len(chosen) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(chosen):]:
        ax.axis("off")
    for ax, (model, batch) in zip(flat, chosen):
        series = {}
        for r in runs:
            j = r["result"]
            if r["model"] != model or "error" in j:
                continue
            name = r["policy"].split(" ")[0]
            series.setdefault(r["policy"] if name in ("checkpoint", "sqrt", "none") else name, []).append(
                (j["peak_live_bytes"] / GB, j["iteration_time_us"] / 1000))
        for label, pts in series.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if len(pts) > 1 else "s",
                    color=plot_style.colour_for(label.split(" ")[0]), label=label,
                    fillstyle="none" if "every 2" in label else "full")
        ax.set_title(f"{model}, batch {batch}")
        ax.set_xlabel("peak live memory (GB)")
        ax.set_ylabel("iteration time (ms)")
        ax.grid(alpha=0.3)
    seen = {}
    for ax in flat:
        for h, l in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(l, h)
    (flat[len(chosen)] if len(flat) > len(chosen) else flat[-1]).legend(list(seen.values()), list(seen.keys()),
                                                                          loc="center", title="policy")
    fig.suptitle("Memory against time: swap, recompute and hybrid policies (h100-sxm, simulated)")
    fig.tight_layout()
    plot_style.save(fig, ["results/memory-saving/front.png", "results/memory-saving/front.svg"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dlsim", default="build/bin/dlsim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--no-fit", action="store_true")
    ap.add_argument("--models", default=",".join(m for m, _ in MODELS))
    a = ap.parse_args()
    chosen = [(m, b) for m, b in MODELS if m in a.models.split(",")]
    os.makedirs("results/memory-saving", exist_ok=True)
    jobs = []
    for model, batch in chosen:
        for label, swap in policies(model):
            jobs.append(("run", model, batch, label, experiment(model, batch, swap)))
    if not a.no_fit:
        for model, batch in chosen:
            for cap_gb, override in ((80, None), (16, {"memory": {"total_mib": 16384}})):
                cap_mib = 81559 if cap_gb == 80 else 16384
                for label, swap in fit_policies(model, cap_mib):
                    jobs.append((f"fit{cap_gb}", model, batch, label, experiment(model, batch, swap, override)))
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = [ex.submit(run, a.dlsim, ["run"] if kind == "run" else ["fit", "--max-batch", "65536"], e)
                for kind, _, _, _, e in jobs]
        results = [f.result() for f in futs]
    runs, fits = [], []
    for (kind, model, batch, label, e), r in zip(jobs, results):
        row = {"model": model, "batch": batch, "policy": label, "experiment": e, "result": r}
        (runs if kind == "run" else fits).append(dict(row, capacity_gb=None if kind == "run" else int(kind[3:])))
    with open("results/memory-saving/runs.json", "w") as f:
        json.dump(runs, f, indent=1, sort_keys=True)
    if fits:
        with open("results/memory-saving/fit.json", "w") as f:
            json.dump(fits, f, indent=1, sort_keys=True)
    front(runs, chosen)
    for model, batch in chosen:
        print(f"\n#### {model}, batch {batch}\n")
        print("| policy | peak live (GB) | limit met | iteration (ms) | overhead | re-run launches | re-run time (ms) | swapped out (GB) |")
        print("|---|---|---|---|---|---|---|---|")
        for r in runs:
            if r["model"] != model:
                continue
            j = r["result"]
            if "error" in j:
                print(f"| {r['policy']} | error: {j['error']} | | | | | | |")
                continue
            met = "" if not j.get("swap_target_bytes") else ("yes" if j.get("swap_limit_met") else "no")
            ov = j.get("overhead")
            print(f"| {r['policy']} | {j['peak_live_bytes'] / GB:.2f} | {met} | {j['iteration_time_us'] / 1000:.1f} | "
                  f"{'' if ov is None else f'{ov * 100:.1f} %'} | {j.get('recomputed_launches', 0)} | "
                  f"{j.get('recompute_us', 0) / 1000:.1f} | {j.get('swap_out_bytes', 0) / GB:.2f} |")
    if fits:
        print("\n| model | policy | largest batch, 80 GB | samples/s there | largest batch, 16 GB | samples/s there |")
        print("|---|---|---|---|---|---|")
        for model, _ in chosen:
            labels = [p for p, _ in fit_policies(model, 1)]
            for label in labels:
                cells = []
                for cap in (80, 16):
                    f = next(x for x in fits if x["model"] == model and x["policy"] == label and x["capacity_gb"] == cap)
                    j = f["result"]
                    if "error" in j:
                        cells += [f"error: {j['error']}", ""]
                    else:
                        cells += [str(j["max_batch"]), f"{j.get('samples_per_s', 0):.0f}"]
                print(f"| {model} | {label} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
