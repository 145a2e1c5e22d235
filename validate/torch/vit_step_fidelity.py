#!/usr/bin/env python3
"""ViT-B/16 on the H200 of session 12 (issue 28): a transformer no dlsim hardware file was fitted on, against the
shipped h200, step and kernel class; written into results/fidelity.md (blocks vit-provenance, vit-step,
vit-classes).

  validate/torch/vit_step_fidelity.py [--dlsim build/bin/dlsim] [--report results/fidelity.md]

Measured (results/fidelity/data/h200-2026-11-28c/step-profiles-eleven.json, torch_step_profile.py; its README has
the commands): torchvision's vit_b_16 at batch 32, 224 px, fp32 (TF32 for convolutions only, PyTorch's default, so
the linear layers run fp32 GEMMs), cross entropy, SGD momentum 0.9 with weight decay 1e-4 (foreach): the median
synchronised eager step of 10, the GPU's busy time and kernels of 2 profiled eager steps, the median whole-step
CUDA-graph replay of 10; traces-vit.tar holds the profiler traces of the 2 eager steps and of 2 replays.

Predicted: `dlsim run --json --chrome-trace` of the step's fake-tensor recording (data/memory-traces/
vit_b_16-b32.torchstep.json.gz: `dlsim import-torch torchvision:vit_b_16 --batch 32`, no weight decay) on the
shipped h200, pool pytorch-caching, serial, 2 iterations (fit_host_model.step_experiment): `launch: eager`
(sync_every_step) against the eager step, its device time against the busy time, `launch: cuda-graph` against the
replay. Per class: the measured kernels by name (MEASURED_RULES) in the eager and the replay trace against dlsim's
kernels of the cuda-graph run's last iteration by op kind and name (dlsim_class). Nothing is fitted here.
"""
import collections
import gzip
import json
import pathlib
import sys
import tarfile

import fit_host_model as host
import llm_step_fidelity as llm  # Runner, ms, FIDELITY
from fit_host_model import pct

DATA = llm.FIDELITY / "h200-2026-11-28c"
CASE, TRACE = "vit_b_16-b32", "vit_b_16-b32"
CLASSES = ["GEMM", "attention", "layer norm", "GELU", "patch embedding (convolution)", "loss (softmax, NLL)",
           "optimizer (foreach SGD)", "copies", "sums (reductions)", "other elementwise"]
# A measured kernel's class by its name (first match): the patch embedding's convolution before GEMM (cuDNN's
# implicit-GEMM kernels say "gemm").
MEASURED_RULES = [("patch embedding (convolution)", r"fprop|dgrad|wgrad|nchwToNhwc|nhwcToNchw"),
                  ("attention", r"fmha|flash|sdpa|Attention"),
                  ("GEMM", r"gemm|sgemm|splitKreduce"),
                  ("layer norm", r"layer_norm|GammaBeta"),
                  ("GELU", r"Gelu"),
                  ("loss (softmax, NLL)", r"softmax|SoftMax|nll_loss"),
                  ("optimizer (foreach SGD)", r"multi_tensor_apply"),
                  ("copies", r"copy_kernel"),
                  ("sums (reductions)", r"reduce_kernel")]


def measured_class(name):
    return llm.measured_class(name, MEASURED_RULES, CLASSES[-1])


def dlsim_class(kind, name):
    """A dlsim kernel's class by its op kind (the trace event's category) and the recorded aten op in its name."""
    op = name.rsplit("/", 1)[-1].split("#")[0]
    for prefix, cls in (("MatMul", "GEMM"), ("Linear", "GEMM"), ("FlashAttention", "attention"),
                        ("LayerNorm", "layer norm"), ("Gelu", "GELU"), ("Conv2d", "patch embedding (convolution)"),
                        ("Softmax", "loss (softmax, NLL)"), ("CrossEntropy", "loss (softmax, NLL)"),
                        ("Copy", "copies")):
        if kind.startswith(prefix):
            return cls
    if op.startswith("nll_loss"):
        return "loss (softmax, NLL)"
    if op.startswith("_foreach_"):
        return "optimizer (foreach SGD)"
    if op == "sum":
        return "sums (reductions)"
    return CLASSES[-1]


def trace_events(member):
    with tarfile.open(DATA / "traces-vit.tar") as t:
        return json.loads(gzip.decompress(t.extractfile(member).read()))["traceEvents"]


def product_key(op, shapes):
    """(aten op, M, N, K) of a matrix product from its inputs' shapes (addmm's first input is the bias), or None."""
    if op == "addmm":
        shapes = shapes[1:]
    if op not in ("mm", "addmm") or len(shapes) < 2 or len(shapes[0]) != 2 or len(shapes[1]) != 2:
        return None
    return (op, shapes[0][0], shapes[1][1], shapes[0][1])


def measured_products(events, steps):
    """{(op, M, N, K): [µs, kernels, ops] per step} of the GEMM kernels in a profiler trace, each kernel under the
    aten op that launched it (the kernel's External id is its innermost CPU op's)."""
    ops = {e["args"]["External id"]: e for e in events
           if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    out = collections.defaultdict(lambda: [0.0, 0.0, set()])
    for e in events:
        if e.get("cat") != "kernel" or measured_class(e["name"]) != "GEMM":
            continue
        op = ops.get(e["args"].get("External id"))
        key = op and product_key(op["name"].removeprefix("aten::"), op["args"].get("Input Dims", []))
        row = out[key or ("other", 0, 0, 0)]
        row[0] += e["dur"] / steps
        row[1] += 1 / steps
        row[2].add(op["args"]["External id"] if op else None)
    return {k: (us, n, len(ids) / steps) for k, (us, n, ids) in out.items()}


def dlsim_products(chrome, recording, iteration):
    """The same for dlsim's kernels of one iteration: each kernel's recorded op (its name's '#ID') and its inputs."""
    shapes = {o["id"]: [i["shape"] for i in o["inputs"]] for o in recording["ops"]}
    out = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    for e in json.loads(chrome.read_text())["traceEvents"]:
        if e.get("ph") != "X" or e.get("args", {}).get("iteration") != iteration or \
                dlsim_class(e.get("cat", ""), e["name"]) != "GEMM":
            continue
        op, _, ident = e["name"].rsplit("/", 1)[-1].partition("#")
        key = product_key(op, shapes.get(int(ident), [])) if ident.isdigit() else None
        row = out[key or ("other", 0, 0, 0)]
        row[0] += e["dur"]
        row[1] += 1
        row[2] += 1
    return out


def products_table(measured, predicted):
    rows = ["The matrix products by shape (C[M×N] = A[M×K]·B[K×N], as the aten op's inputs give them), ms per step "
            "(kernels per step); µs per product; dlsim's error against the eager trace in brackets.", "",
            "| aten op | M | N | K | products | eager trace | dlsim, h200 | µs per product (trace / dlsim) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for key in sorted(set(measured) | set(predicted), key=lambda k: -measured.get(k, (0,))[0]):
        mus, mn, mops = measured.get(key, (0.0, 0.0, 0.0))
        pus, pn, pops = predicted.get(key, (0.0, 0.0, 0.0))
        err = f"; {pct(pus, mus)}" if mus else ""
        per = f"{mus / mops:,.0f} / {pus / pops:,.0f}" if mops and pops else ""
        rows.append(f"| {key[0]} | {key[1]:,} | {key[2]:,} | {key[3]:,} | {max(mops, pops):,.0f} | {llm.ms(mus)} "
                    f"({mn:,.0f}) | {llm.ms(pus)} ({pn:,.0f}{err}) | {per} |")
    return rows


def trace_classes(events, steps):
    """{class: µs per step}, {class: kernels per step} of a profiler trace's kernels."""
    us, n = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("cat") == "kernel":
            c = measured_class(e["name"])
            us[c] += e["dur"] / steps
            n[c] += 1 / steps
    return us, n


def cell(us, n, c, ref=None):
    t = sum(us.values()) if c == "total" else us[c]
    k = sum(n.values()) if c == "total" else n[c]
    err = "" if ref is None else ("; n/a" if not ref else f"; {pct(t, ref)}")
    return f"{llm.ms(t)} ({k:,.0f}{err})", t


def generate(_, binary, tmp):
    recs = {r["case"]: r for r in json.loads((DATA / "step-profiles-eleven.json").read_text())["records"]}
    r = recs[CASE]
    runner = llm.Runner(binary, tmp)
    keys = {"model": runner.trace(TRACE)}
    eager, _ = runner.run(keys, r["batch"], "h200", None, classify=dlsim_class)
    graph, (gus, gn) = runner.run(keys, r["batch"], "h200", None, launch="cuda-graph", classify=dlsim_class)
    recording = json.loads(pathlib.Path(keys["model"]).read_text())
    predicted = dlsim_products(runner.last_chrome, recording, graph["iterations_completed"] - 1)
    wall, busy = r["eager_wall_ms_median"] * 1000.0, r["gpu_busy_ms_per_iteration"] * 1000.0
    replay = r["graph_replay_ms_median"] * 1000.0
    dev, it = eager["device_time_us"], graph["iteration_time_us"]
    step = ["ViT-B/16 b32 (torchvision `vit_b_16`, 224 px, fp32, SGD momentum) on the H200 of `h200-2026-11-28c` "
            f"({r['torch']}, cuDNN {r['cudnn']}); ms per step, dlsim's error against the measurement in brackets: "
            "`launch: eager` against the synchronised eager step, its device time against the GPU's busy time "
            "(profiled eager steps), `launch: cuda-graph` against the whole-step replay. Hardware file: the shipped "
            "`h200`; the step: its `import-torch` recording. Kernels: per step (dlsim: its last iteration).", "",
            "| | eager step | host (bound) | device time (vs busy) | cuda-graph (vs replay) | kernels |",
            "|---|---:|---:|---:|---:|---:|",
            f"| measured | {llm.ms(wall)} | | {llm.ms(busy)} | {llm.ms(replay)} | {r['kernels_per_iteration']:,.0f} "
            f"(replay {r['graph_kernels_per_replay']:,.0f}) |",
            f"| traced, h200 | {llm.ms(eager['iteration_time_us'])} ({pct(eager['iteration_time_us'], wall)}) | "
            f"{llm.ms(eager['host_time_us'])} ({eager['bound']}) | {llm.ms(dev)} ({pct(dev, busy)}) | {llm.ms(it)} "
            f"({pct(it, replay)}) | {sum(gn.values()):,.0f} |"]
    eager_events = trace_events(f"traces/{TRACE}.json.gz")
    eus, en = trace_classes(eager_events, r["profiled_iterations"])
    rus, rn = trace_classes(trace_events(f"traces/{TRACE}.replay.json.gz"), r["graph_profiled_replays"])
    rows = ["Kernel time by class, ms per step (kernels per step; dlsim's error against the replay trace's class): "
            "the profiled eager steps, the profiled replays, dlsim's `launch: cuda-graph` run on `h200`.", "",
            "| class | eager trace | replay trace | dlsim, h200 |", "|---|---:|---:|---:|"]
    for c in CLASSES + ["total"]:
        e, _ = cell(eus, en, c)
        rp, ref = cell(rus, rn, c)
        d, _ = cell(gus, gn, c, ref)
        rows.append(f"| {c} | {e} | {rp} | {d} |")
    products = products_table(measured_products(eager_events, r["profiled_iterations"]), predicted)
    return {"vit-step": "\n".join(step), "vit-classes": "\n".join(rows + [""] + products)}


def main():
    return host.report_main("vit_step_fidelity", __doc__, generate, provenance="vit-provenance")


if __name__ == "__main__":
    sys.exit(main())
