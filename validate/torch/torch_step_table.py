#!/usr/bin/python3
"""The table of docs/torch-step.md: for each zoo model that torchvision has, a recorded step (dlsim import-torch)
beside PyTorch's own count on the CPU (torch_step_direct_count.py, real tensors) and beside dlsim's graphs of it
(the traced graph and the zoo's), parameters, saved-for-backward bytes and peak live bytes.

  PyTorch (real)  torch_step_direct_count.py: parameters, saved bytes by data pointer, and the CPU allocator's
                  running total between top-level ops (boundary) and over everything (kernel scratch included)
  trace           the trace's summary: what the recorder counted from the storages it followed
  traced graph    dlsim model FILE --json (saved) and dlsim run on it (peak_live_bytes): the graph dlsim loads
  zoo             dlsim model NAME --json and dlsim run on the zoo's graph of the same model

Every dlsim run: h100-sxm, pytorch-caching, no swap, serial, fp32, sgd-momentum (the tracer's defaults).
Usage: validate/torch/torch_step_table.py --dlsim build/bin/dlsim [--batch 4] [--models resnet18,...]
       [--out-dir DIR] (the traces and the JSON of every figure land there; default a temporary folder)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ZOO_CNNS = ["alexnet", "vgg16", "vgg19", "resnet18", "resnet50", "resnet101", "resnet152", "googlenet",
            "inception_v3", "densenet121", "mobilenet_v2", "squeezenet1_1"]


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()}")
    return json.loads(r.stdout[r.stdout.index("{"):])


def dlsim_run_peak(dlsim, model, batch, folder, name):
    exp = os.path.join(folder, f"{name}.yaml")
    with open(exp, "w", encoding="ascii") as f:
        f.write(f"model: {model}\nbatch: {batch}\nhw: h100-sxm\npool: pytorch-caching\nswap: none\n"
                "concurrency: serial\n")
    return run_json([dlsim, "run", exp, "--json"])["peak_live_bytes"]


def pytorch_side(model, batch, folder):
    """The trace and PyTorch's direct count, each kept in `folder` once made (the slow part: the step runs for
    real on the CPU)."""
    trace = os.path.join(folder, f"{model}-b{batch}.torchstep.json")
    if not os.path.exists(trace):
        subprocess.run([sys.executable, os.path.join(ROOT, "frontend", "torch", "import_torch.py"),
                        f"torchvision:{model}", "--batch", str(batch), "--out", trace], check=True, capture_output=True)
    direct_file = os.path.join(folder, f"{model}-b{batch}.direct.json")
    if not os.path.exists(direct_file):
        direct = run_json([sys.executable, os.path.join(HERE, "torch_step_direct_count.py"), f"torchvision:{model}",
                           "--batch", str(batch), "--trace", trace])
        with open(direct_file, "w", encoding="ascii") as f:
            json.dump(direct, f, indent=1)
    with open(direct_file, encoding="ascii") as f:
        return trace, json.load(f)


def measure(model, batch, dlsim, folder):
    trace, direct = pytorch_side(model, batch, folder)
    traced = run_json([dlsim, "model", trace, "--json"])
    zoo = run_json([dlsim, "model", model, "--batch", str(batch), "--json"])
    row = {"model": model, "batch": batch, "direct": direct, "traced_graph": traced, "zoo": zoo,
           "traced_graph_peak_live": dlsim_run_peak(dlsim, trace, batch, folder, f"{model}-traced"),
           "zoo_peak_live": dlsim_run_peak(dlsim, model, batch, folder, f"{model}-zoo")}
    with open(os.path.join(folder, f"{model}-b{batch}.json"), "w", encoding="ascii") as f:
        json.dump(row, f, indent=1)
    return row


def mib(b):
    return f"{b / 2**20:.2f}"


def diff(a, b):
    """a - b as bytes and percent of b."""
    d = a - b
    return "0" if d == 0 else f"{d:+,} B ({100 * d / b:+.2f}%)"


def markdown(rows):
    out = ["| model | batch | params (PyTorch = trace = zoo?) | saved MiB: PyTorch / trace / traced graph / zoo "
           "| zoo - PyTorch | peak live MiB: PyTorch between ops / with scratch / trace / traced graph (dlsim run) "
           "/ zoo (dlsim run) | traced graph - trace | zoo - trace |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        d, t = r["direct"], r["direct"]["trace"]
        same = d["parameters"] == t["parameters"] == r["zoo"]["params"] == r["traced_graph"]["params"]
        params = f"{d['parameters']:,} {'(all equal)' if same else '(differ: ' + str(r['zoo']['params']) + ')'}"
        saved = " / ".join(mib(x) for x in (d["saved_bytes"], t["saved_bytes"],
                                             r["traced_graph"]["saved_for_backward_bytes"],
                                             r["zoo"]["saved_for_backward_bytes"]))
        peak = " / ".join(mib(x) for x in (d["boundary_peak"], d["allocator_peak"], t["peak_live_bytes"],
                                            r["traced_graph_peak_live"], r["zoo_peak_live"]))
        out.append(f"| {r['model']} | {r['batch']} | {params} | {saved} | "
                   f"{diff(r['zoo']['saved_for_backward_bytes'], d['saved_bytes'])} | {peak} | "
                   f"{diff(r['traced_graph_peak_live'], t['peak_live_bytes'])} | "
                   f"{diff(r['zoo_peak_live'], t['peak_live_bytes'])} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dlsim", help="the dlsim binary; without it, only the PyTorch side is made (into --out-dir)")
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--models", default=",".join(ZOO_CNNS))
    p.add_argument("--out-dir")
    a = p.parse_args()
    folder = a.out_dir or tempfile.mkdtemp(prefix="dlsim-torch-step-table-")
    os.makedirs(folder, exist_ok=True)
    rows = []
    if not a.dlsim:
        for m in a.models.split(","):
            pytorch_side(m, a.batch, folder)
            print(f"recorded and counted {m}", file=sys.stderr)
        return
    for m in a.models.split(","):
        cached = os.path.join(folder, f"{m}-b{a.batch}.json")
        if os.path.exists(cached):
            with open(cached, encoding="ascii") as f:
                rows.append(json.load(f))
        else:
            rows.append(measure(m, a.batch, a.dlsim, folder))
        print(f"measured {m}", file=sys.stderr)
    print(markdown(rows))


if __name__ == "__main__":
    main()
