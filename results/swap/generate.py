#!/usr/bin/env python3
"""The tables and figures of results/swap.md from the swap sweeps, plus the runs they need besides: our
optimizer at the memory of each baseline that takes no limit, and `dlsim fit` per model and policy.

Reads results/swap-singa-cifar/, results/swap-vdnn-titanx/, results/swap-link/ and results/swap-pareto-<model>/runs.csv (written by
`dlsim sweep configs/sweeps/swap-*.yaml`), runs build/bin/dlsim for the rest, writes results/swap/ (figures,
same-memory.csv, fit.json) and prints the markdown tables.

Usage: scripts/swap_tables.py [--dlsim build/bin/dlsim] [--no-fit]
"""
import argparse
import csv
import json
import os
import re
import subprocess
import sys
import tempfile

MODELS = [("vgg16", 64), ("resnet50", 64), ("inception_v3", 64), ("bert-base", 32), ("gpt2-small", 8)]
GIB = 2 ** 30
MIB = 2 ** 20
# one colour per policy in every figure
COLOURS = {"none": "black", "vdnn": "tab:red", "vdnn(policy=conv)": "tab:pink", "save-on-cpu": "tab:brown",
           "singa no-overhead": "tab:cyan", "singa stick-to-limit": "tab:blue", "swapadvisor": "tab:green",
           "fastest-under-limit": "tab:orange"}


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def family(swap):
    if swap.startswith("singa"):
        return "singa no-overhead" if "no-overhead" in swap else "singa stick-to-limit"
    return re.sub(r"\(limit_fraction=[\d.]+\)", "", swap).replace("(limit_fraction=", "(")


def fraction(swap):
    m = re.search(r"limit_fraction=([\d.]+)", swap)
    return float(m.group(1)) if m else None


def run(dlsim, yaml, args=("run",), extra=()):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(yaml)
        path = f.name
    out = subprocess.run([dlsim, *args, path, "--json", *extra], capture_output=True, text=True)
    os.unlink(path)
    if out.returncode not in (0, 3):
        sys.exit(f"dlsim failed on\n{yaml}\n{out.stderr}")
    return json.loads(out.stdout)


def singa_table():
    r = rows("results/swap-singa-cifar/runs.csv")
    print("| network | no-swap peak live (MiB) | mode | ranking | best saving at zero overhead | at limit_fraction |")
    print("|---|---|---|---|---|---|")
    for model in ["cifar-alexnet", "cifar-vgg16", "cifar-resnet20"]:
        base = next(x for x in r if x["model"] == model and x["swap"] == "none")
        for mode in ["no-overhead", "stick-to-limit"]:
            for rank in ["doa", "aoa", "wdoa", "vote"]:
                best, at = 0.0, "-"
                for x in r:
                    if x["model"] != model or x["swap"] == "none" or x["status"] != "ok":
                        continue
                    if (mode == "no-overhead") != ("no-overhead" in x["swap"]):
                        continue
                    if (f"rank={rank}" in x["swap"]) != (rank != "vote"):
                        continue
                    saved = 1 - int(x["peak_live_bytes"]) / int(x["no_swap_peak_live_bytes"])
                    if float(x["overhead"]) <= 0 and saved > best:
                        best, at = saved, str(fraction(x["swap"]))
                print(f"| {model} | {int(base['peak_live_bytes']) / MIB:.1f} | {mode} | {rank} | {best * 100:.1f} % | {at} |")


def vdnn_table():
    print("| batch | pool | policy | status | peak live (GiB) (at the OOM when oom) | the plan's peak (GiB) | iteration (s) | oracle (s) | slower than the oracle |")
    print("|---|---|---|---|---|---|---|---|---|")
    for x in rows("results/swap-vdnn-titanx/runs.csv"):
        it = float(x["iteration_time_us"] or 0) / 1e6
        oracle = float(x["no_swap_iteration_time_us"] or 0) / 1e6
        ov = f"{float(x['overhead']) * 100:.1f} %" if x["overhead"] and x["status"] == "ok" else "-"
        planned = f"{int(x['swap_planned_peak_bytes']) / GIB:.2f}" if x.get("swap_planned_peak_bytes") else "-"
        print(f"| {x['batch']} | {x['pool']} | {x['swap']} | {x['status']} | {int(x['peak_live_bytes'] or 0) / GIB:.2f} | "
              f"{planned} | {f'{it:.3f}' if it else '-'} | {f'{oracle:.3f}' if oracle else '-'} | {ov} |")


def pareto(dlsim, figdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    same = []
    for model, batch in MODELS:
        r = rows(f"results/swap-pareto-{model}/runs.csv")
        base = next(x for x in r if x["swap"] == "none")
        peak = int(base["peak_live_bytes"])
        print(f"\n**{model}, batch {batch}** (no swap: {float(base['iteration_time_us']) / 1000:.1f} ms, "
              f"{peak / GIB:.2f} GiB live). Iteration time in ms, and peak live GiB; `-` where the plan missed the limit.\n")
        fams = ["singa no-overhead", "singa stick-to-limit", "swapadvisor", "fastest-under-limit"]
        print("| limit | " + " | ".join(fams) + " | lower bound | ours vs best other |")
        print("|---|" + "---|" * (len(fams) + 2))
        for f in [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]:
            cells, times, bound = [], {}, "-"
            for fam in fams:
                x = next((y for y in r if family(y["swap"]) == fam and fraction(y["swap"]) == f), None)
                if not x or x["status"] != "ok" or x["swap_limit_met"] != "true":
                    cells.append("-")
                    continue
                t = float(x["iteration_time_us"]) / 1000
                times[fam] = t
                cells.append(f"{t:.1f} ({int(x['peak_live_bytes']) / GIB:.2f})")
                if x["swap_lower_bound_us"]:
                    bound = f"{float(x['swap_lower_bound_us']) / 1000:.1f}"
            others = [v for k, v in times.items() if k != "fastest-under-limit"]
            verdict = "-"
            if "fastest-under-limit" in times and others:
                ours, best = times["fastest-under-limit"], min(others)
                verdict = "tie" if abs(ours - best) < 1e-3 else (f"{(1 - ours / best) * 100:.1f} % faster" if ours < best else f"{(ours / best - 1) * 100:.1f} % SLOWER")
            elif "fastest-under-limit" in times:
                verdict = "only ours meets it"
            print(f"| {int(f * 100)} % | " + " | ".join(cells) + f" | {bound} | {verdict} |")
        # the baselines that take no limit, against ours at their memory
        print("\n| policy | iteration (ms) | peak live (GiB) | ours at that memory (ms) | ours vs it |")
        print("|---|---|---|---|---|")
        for x in r:
            if fraction(x["swap"]) is not None or x["swap"] == "none" or x["status"] != "ok":
                continue
            live = int(x["peak_live_bytes"])
            if live >= peak:
                print(f"| {x['swap']} | {float(x['iteration_time_us']) / 1000:.1f} | {live / GIB:.2f} | (saves nothing) | - |")
                continue
            j = run(dlsim, f"model: {model}\nbatch: {batch}\nhw: h100-sxm\npool: pytorch-caching\nswap: {{name: fastest-under-limit, limit_mb: {live // MIB}}}\n"
                           "concurrency: serial\niterations: 3\n")
            ours = j["iteration_time_us"] / 1000 if j.get("swap_limit_met") else None
            t = float(x["iteration_time_us"]) / 1000
            same.append({"model": model, "baseline": x["swap"], "baseline_ms": t, "memory_bytes": live,
                         "ours_ms": ours, "ours_peak_live_bytes": j["peak_live_bytes"]})
            print(f"| {x['swap']} | {t:.1f} | {live / GIB:.2f} | {ours:.1f} | "
                  f"{'tie' if abs(ours - t) < 1e-3 else (f'{(1 - ours / t) * 100:.1f} % faster' if ours < t else f'{(ours / t - 1) * 100:.1f} % SLOWER')} |")
        fig, ax = plt.subplots(figsize=(6, 4))
        for fam in ["none", "vdnn", "vdnn(policy=conv)", "save-on-cpu"] + fams:
            pts = sorted((int(y["peak_live_bytes"]) / GIB, float(y["iteration_time_us"]) / 1000) for y in r
                         if family(y["swap"]) == fam and y["status"] == "ok" and (fraction(y["swap"]) is None or y["swap_limit_met"] == "true"))
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if len(pts) > 1 else "o", color=COLOURS[fam], label=fam)
        ax.set_xlabel("peak live memory (GiB)")
        ax.set_ylabel("iteration time (ms)")
        ax.set_title(f"{model}, batch {batch}, h100-sxm")
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(figdir, f"pareto-{model}.png"), dpi=110)
        plt.close(fig)
    with open(os.path.join(figdir, "same-memory.csv"), "w") as f:
        w = csv.DictWriter(f, fieldnames=list(same[0].keys()))
        w.writeheader()
        w.writerows(same)


def link_table(dlsim):
    print("| PCIe each way (GB/s) | policy | iteration (ms) | overhead | peak live (GiB) | D2H busy | lower bound (ms) |")
    print("|---|---|---|---|---|---|---|")
    for x in rows("results/swap-link/runs.csv"):
        bw = re.search(r"h2d_pinned_gb_per_s=([\d.]+)", x["hw"]).group(1)
        print(f"| {bw} | {x['swap']} | {float(x['iteration_time_us']) / 1000:.1f} | {float(x['overhead']) * 100:.1f} % | "
              f"{int(x['peak_live_bytes']) / GIB:.2f} | {float(x['copy_d2h_busy']) * 100:.0f} % | {float(x['swap_lower_bound_us']) / 1000:.1f} |")
    j = run(dlsim, "model: resnet50\nbatch: 64\nhw: gh200\npool: pytorch-caching\nswap: {name: fastest-under-limit, limit_fraction: 0.5}\n"
                   "concurrency: serial\niterations: 3\n")
    print(f"| GH200 (450, its own GPU model) | fastest-under-limit(limit_fraction=0.5) | {j['iteration_time_us'] / 1000:.1f} | "
          f"{j['overhead'] * 100:.1f} % | {j['peak_live_bytes'] / GIB:.2f} | {j['copy_d2h_busy'] * 100:.0f} % | {j['swap_lower_bound_us'] / 1000:.1f} |")


def memory_at_overhead(dlsim):
    print("| model (no-swap peak live) | policy | within 1 % | within 5 % | within 20 % |")
    print("|---|---|---|---|---|")
    for model, batch in MODELS:
        for swap in ["{name: singa}", "{name: fastest-under-limit}"]:
            j = run(dlsim, f"model: {model}\nbatch: {batch}\nhw: h100-sxm\npool: pytorch-caching\nswap: {swap}\nconcurrency: serial\niterations: 3\n",
                    args=("fit",), extra=("--memory-at-overhead", "1,5,20", "--max-batch", str(batch)))
            cells = [f"{m['peak_live_bytes'] / GIB:.2f} GiB ({m['overhead'] * 100:.1f} %)" if m["found"] else "-" for m in j["memory_at_overhead"]]
            name = "singa stick-to-limit" if "singa" in swap else "fastest-under-limit"
            peak = int(next(x for x in rows(f"results/swap-pareto-{model}/runs.csv") if x["swap"] == "none")["peak_live_bytes"])
            print(f"| {model} b{batch} ({peak / GIB:.2f} GiB) | {name} | " + " | ".join(cells) + " |")


def fits(dlsim, figdir):
    policies = [("none", "none"), ("vdnn", "{name: vdnn}"), ("save-on-cpu", "save-on-cpu"),
                ("singa stick-to-limit", "{name: singa}"), ("swapadvisor", "{name: swapadvisor}"),
                ("fastest-under-limit", "{name: fastest-under-limit}")]
    out = {}
    print("\n| model | " + " | ".join(p[0] for p in policies) + " |")
    print("|---|" + "---|" * len(policies))
    for model, batch in MODELS:
        cells = []
        for name, swap in policies:
            j = run(dlsim, f"model: {model}\nbatch: {batch}\nhw: h100-sxm\npool: planned\nswap: {swap}\nconcurrency: serial\niterations: 3\n",
                    args=("fit",), extra=("--max-batch", "4096"))
            out[f"{model} {name}"] = j
            cells.append(f"{j['max_batch']} ({j['samples_per_s']:.0f}/s)" if j["max_batch"] else "0")
        print(f"| {model} | " + " | ".join(cells) + " |")
    with open(os.path.join(figdir, "fit.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dlsim", default="build/bin/dlsim")
    ap.add_argument("--no-fit", action="store_true")
    a = ap.parse_args()
    os.makedirs("results/swap", exist_ok=True)
    print("## SINGA on its CIFAR networks\n")
    singa_table()
    print("\n## vDNN's VGG-16\n")
    vdnn_table()
    print("\n## Pareto\n")
    pareto(a.dlsim, "results/swap")
    print("\n## The host link\n")
    link_table(a.dlsim)
    print("\n## Memory at overhead\n")
    memory_at_overhead(a.dlsim)
    if not a.no_fit:
        print("\n## Fit\n")
        fits(a.dlsim, "results/swap")


if __name__ == "__main__":
    main()
