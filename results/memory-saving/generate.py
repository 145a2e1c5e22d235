"""The tables of README.md: for VGG-16, ResNet-50, ResNet-152, BERT-base and GPT-2 small on the h100-sxm, every
memory-saving policy (swap, recompute, hybrid) at the batches of results/swap, and the largest batch each fits on
80 GB and on 16 GB (`dlsim fit`). Each point is one `dlsim run --json` (the JSON has the recomputation figures
runs.csv lacks); the raw results go to runs.json and fit.json, the front to front.png and front.svg."""
import functools
import json

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
    # checkmate's own plan (compare_baselines off: the rows above are the baselines it would otherwise switch to).
    # VGG-16's 127 ops are solved op by op; the others, above max_ops, on a coarse graph of 40 segments.
    if model == "vgg16":
        out.append(("checkmate 0.95", {"name": "checkmate", "limit_fraction": 0.95, "time_limit_s": 120,
                                       "compare_baselines": False}))
    else:
        for f in (0.7, 0.5, 0.3):
            out.append((f"checkmate {f}", {"name": "checkmate", "limit_fraction": f, "compare_baselines": False}))
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


def front(study, runs):
    """front.png and front.svg: iteration time against peak live memory, one panel per model, one colour per
    policy (figures/plot_style.py), the budget-driven policies' points joined in order of budget."""
    import plot_style  # sets the deterministic matplotlib backend and options
    plt = plot_style.plt
    cols = min(3, len(MODELS))
    rows = (len(MODELS) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.8 * rows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(MODELS):]:
        ax.axis("off")
    for ax, (model, batch) in zip(flat, MODELS):
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
        for h, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, h)
    (flat[len(MODELS)] if len(flat) > len(MODELS) else flat[-1]).legend(list(seen.values()), list(seen.keys()),
                                                                          loc="center", title="policy")
    fig.suptitle("Memory against time: swap, recompute and hybrid policies (h100-sxm, simulated)")
    fig.tight_layout()
    plot_style.save(fig, [str(study.path("front.png")), str(study.path("front.svg"))])


def front_tables(runs):
    out = []
    for model, batch in MODELS:
        out += ["", f"#### {model}, batch {batch}", "",
                "| policy | peak live (GB) | limit met | iteration (ms) | overhead | re-run launches | "
                "re-run time (ms) | swapped out (GB) |", "|---|---|---|---|---|---|---|---|"]
        for r in runs:
            if r["model"] != model:
                continue
            j = r["result"]
            if "error" in j:
                out.append(f"| {r['policy']} | error: {j['error']} | | | | | | |")
                continue
            met = "" if not j.get("swap_target_bytes") else ("yes" if j.get("swap_limit_met") else "no")
            ov = j.get("overhead")
            out.append(f"| {r['policy']} | {j['peak_live_bytes'] / GB:.2f} | {met} | "
                       f"{j['iteration_time_us'] / 1000:.1f} | {'' if ov is None else f'{ov * 100:.1f} %'} | "
                       f"{j.get('recomputed_launches', 0)} | {j.get('recompute_us', 0) / 1000:.1f} | "
                       f"{j.get('swap_out_bytes', 0) / GB:.2f} |")
    return "\n".join(out).strip("\n")


def fit_table(fits):
    out = ["| model | policy | largest batch, 80 GB | samples/s there | largest batch, 16 GB | samples/s there |",
           "|---|---|---|---|---|---|"]
    for model, _ in MODELS:
        for label, _ in fit_policies(model, 1):
            cells = []
            for cap in (80, 16):
                j = next(x for x in fits if x["model"] == model and x["policy"] == label
                         and x["capacity_gb"] == cap)["result"]
                if "error" in j:
                    cells += [f"error: {j['error']}", ""]
                else:
                    cells += [str(j["max_batch"]), f"{j.get('samples_per_s', 0):.0f}"]
            out.append(f"| {model} | {label} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def generate(study):
    jobs = []
    for model, batch in MODELS:
        for label, swap in policies(model):
            jobs.append(("run", model, batch, label, experiment(model, batch, swap)))
    for model, batch in MODELS:
        for cap_gb, override in ((80, None), (16, {"memory": {"total_mib": 16384}})):
            cap_mib = 81559 if cap_gb == 80 else 16384
            for label, swap in fit_policies(model, cap_mib):
                jobs.append((f"fit{cap_gb}", model, batch, label, experiment(model, batch, swap, override)))
    results = study.dlsim.parallel([functools.partial(
        study.dlsim.json, ["run"] if kind == "run" else ["fit", "--max-batch", "65536"], e, allow_error=True)
        for kind, _, _, _, e in jobs])
    runs, fits = [], []
    for (kind, model, batch, label, e), r in zip(jobs, results):
        row = {"model": model, "batch": batch, "policy": label, "experiment": e, "result": r}
        (runs if kind == "run" else fits).append(dict(row, capacity_gb=None if kind == "run" else int(kind[3:])))
    with open(study.path("runs.json"), "w") as f:
        json.dump(runs, f, indent=1, sort_keys=True)
    with open(study.path("fit.json"), "w") as f:
        json.dump(fits, f, indent=1, sort_keys=True)
    front(study, runs)
    study.block("front", front_tables(runs))
    study.block("fit", fit_table(fits))
