#!/usr/bin/env python3
"""Runs dlsim on the multi-GPU points of results/multi-gpu.md and writes its generated tables (issue 32).

    python3 validate/multi_gpu_report.py [--dlsim build/bin/dlsim] [--write | --check]

For every row below it writes an experiment file (one rank of the `parallel:` layout), runs
`dlsim run --json` on it and reads peak reserved memory, its breakdown, iteration time, tokens/s per GPU, MFU and
exposed communication. The published side is read from results/multi-gpu/published.yaml by id, never typed here.
--write replaces the text between the page's `dlsim ...: begin/end` markers; --check exits 1 when the page differs
from what this run generates, the commit line aside (dlsim is deterministic: a rerun is byte-identical). The H100
runs take about 7 s of CPU (the 70B and 405B rows most of it), so CTest runs --check. Nothing here is fitted: the
rows use the shipped hardware files as they are. The A100 rows and the model-state rows are in
validate/multi_gpu_a100.py and validate/multi_gpu_model_states.py.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

import multi_gpu_a100
import multi_gpu_model_states

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "results", "multi-gpu.md")
PUBLISHED = os.path.join(ROOT, "results", "multi-gpu", "published.yaml")
GIB = 1024.0 ** 3

# torchtitan's FSDP2 defaults (MixedPrecisionPolicy bf16 params, fp32 reduce; reshard after forward).
FSDP = {"param_dtype": "bf16", "reduce_dtype": "fp32"}
# Checkpointing every decoder layer under FSDP: FSDP2's default too (reshard after forward; the recomputation reads
# the unit's backward all-gather, docs/multi-gpu.md).
FSDP_AC = dict(FSDP)
AC = {"name": "checkpoint", "every": 1}
# torchtitan's selective per-op checkpointing (selective_ac_option = 'op': every block, the outputs of its matmuls
# but every second one, of attention and of reduce-scatter kept; docs/swap-and-recompute.md).
SAC = {"name": "checkpoint", "selective": "op"}
# Tensor parallel as torchtitan applies it (and Megatron with --sequence-parallel): column/row splits of attention
# and MLP, and sequence parallel for the norms between them, tp inside a node, FSDP across nodes.
def fsdp_tp(f, t):
    return dict(fsdp=f, tp=t, sequence_parallel=True, **FSDP)


# h100-sxm with its memory raised far past any run (as experiment/fsdp_run_benchmark.cc does): the time a run that
# does not fit 80 GB would take, and the memory it would need. Not a hardware part: the table says "memory unbounded".
UNBOUNDED = "h100-sxm (memory unbounded)"


# Models the zoo has no preset for: their Hugging Face config.json, shipped in results/multi-gpu/models/ (its README
# says where each comes from).
MODEL_FILES = {
    "llama3-70b": os.path.join("results", "multi-gpu", "models", "Meta-Llama-3-70B.config.json"),
    "llama3.1-405b": os.path.join("results", "multi-gpu", "models", "Llama-3.1-405B.config.json"),
}

# (key, model, gpus, parallel, swap, batch per GPU, sequence, hardware)
MATRIX = [
    ("8b-dp8", "llama3-8b", 8, {"dp": 8}, "none", 1, 8192, "h100-sxm"),
    ("8b-dp8-ac", "llama3-8b", 8, {"dp": 8}, AC, 1, 8192, "h100-sxm"),
    ("8b-fsdp8", "llama3-8b", 8, dict(fsdp=8, **FSDP), "none", 2, 8192, "h100-sxm"),
    ("8b-fsdp8-b1", "llama3-8b", 8, dict(fsdp=8, **FSDP), "none", 1, 8192, "h100-sxm"),
    ("8b-fsdp8-ac", "llama3-8b", 8, dict(fsdp=8, **FSDP_AC), AC, 2, 8192, "h100-sxm"),
    ("8b-fsdp64", "llama3-8b", 64, dict(fsdp=64, **FSDP), "none", 2, 8192, "h100-sxm"),
    ("8b-fsdp64-ac", "llama3-8b", 64, dict(fsdp=64, **FSDP_AC), AC, 2, 8192, "h100-sxm"),
    ("8b-fsdp128", "llama3-8b", 128, dict(fsdp=128, **FSDP), "none", 2, 8192, "h100-sxm"),
    ("8b-fsdp128-ac", "llama3-8b", 128, dict(fsdp=128, **FSDP_AC), AC, 2, 8192, "h100-sxm"),
    # torchtitan's own checkpointing for its published 8B rows (section 2).
    ("8b-fsdp8-sac", "llama3-8b", 8, dict(fsdp=8, **FSDP), SAC, 2, 8192, "h100-sxm"),
    ("8b-fsdp8-sac-unb", "llama3-8b", 8, dict(fsdp=8, **FSDP), SAC, 2, 8192, UNBOUNDED),
    ("8b-fsdp128-sac", "llama3-8b", 128, dict(fsdp=128, **FSDP), SAC, 2, 8192, "h100-sxm"),
    ("8b-dp64", "llama3-8b", 64, {"dp": 64}, "none", 1, 8192, "h100-sxm"),
    ("8b-dp64-ac", "llama3-8b", 64, {"dp": 64}, AC, 1, 8192, "h100-sxm"),
    # A Llama-family preset small enough for DDP's full replicas (1.24 B parameters, 16 B each: 19.8 GB).
    ("1b-dp8", "llama3.2-1b", 8, {"dp": 8}, "none", 2, 8192, "h100-sxm"),
    ("1b-dp8-ac", "llama3.2-1b", 8, {"dp": 8}, AC, 2, 8192, "h100-sxm"),
    ("1b-dp64", "llama3.2-1b", 64, {"dp": 64}, "none", 2, 8192, "h100-sxm"),
    ("1b-dp64-ac", "llama3.2-1b", 64, {"dp": 64}, AC, 2, 8192, "h100-sxm"),
    # FSDP x TP: batch is per FSDP rank, which the T GPUs of its tp group share: 2 sequences per GPU, as above.
    ("8b-fsdp4tp2", "llama3-8b", 8, fsdp_tp(4, 2), "none", 4, 8192, "h100-sxm"),
    ("8b-fsdp4tp2-ac", "llama3-8b", 8, fsdp_tp(4, 2), AC, 4, 8192, "h100-sxm"),
    ("8b-fsdp8tp8", "llama3-8b", 64, fsdp_tp(8, 8), "none", 16, 8192, "h100-sxm"),
    ("8b-fsdp8tp8-ac", "llama3-8b", 64, fsdp_tp(8, 8), AC, 16, 8192, "h100-sxm"),
    # 70B: one sequence per GPU (torchtitan's 70B FSDP rows run local batch 1).
    ("70b-fsdp8tp8", "llama3-70b", 64, fsdp_tp(8, 8), "none", 8, 8192, "h100-sxm"),
    ("70b-fsdp8tp8-ac", "llama3-70b", 64, fsdp_tp(8, 8), AC, 8, 8192, "h100-sxm"),
    ("70b-fsdp64", "llama3-70b", 64, dict(fsdp=64, **FSDP), "none", 1, 8192, "h100-sxm"),
    ("70b-fsdp64-ac", "llama3-70b", 64, dict(fsdp=64, **FSDP_AC), AC, 1, 8192, "h100-sxm"),
    # Published tensor-parallel points, at their own layout and local batch (results/multi-gpu/published.yaml). Where
    # the 80 GB part runs out of memory, the same run with the memory unbounded (UNBOUNDED) says what the time
    # would be: its peak is what the run would need, not a fit.
    ("8b-fsdp8tp8-b12", "llama3-8b", 64, fsdp_tp(8, 8), "none", 12, 8192, "h100-sxm"),
    ("8b-fsdp8tp8-b12-unb", "llama3-8b", 64, fsdp_tp(8, 8), "none", 12, 8192, UNBOUNDED),
    ("8b-fsdp8tp8-b12-ac", "llama3-8b", 64, fsdp_tp(8, 8), AC, 12, 8192, "h100-sxm"),
    ("8b-fsdp8tp8-b12-sac", "llama3-8b", 64, fsdp_tp(8, 8), SAC, 12, 8192, "h100-sxm"),
    ("70b-fsdp32tp8-ac", "llama3-70b", 256, fsdp_tp(32, 8), AC, 16, 8192, "h100-sxm"),
    ("70b-fsdp32tp8-ac-unb", "llama3-70b", 256, fsdp_tp(32, 8), AC, 16, 8192, UNBOUNDED),
    ("405b-fsdp16tp8-ac", "llama3.1-405b", 128, fsdp_tp(16, 8), AC, 2, 8192, "h100-sxm"),
    ("405b-fsdp16tp8-ac-unb", "llama3.1-405b", 128, fsdp_tp(16, 8), AC, 2, 8192, UNBOUNDED),
]

# Published points set beside a matrix row: (published id, dlsim row keys that bracket it, the reason they differ).
COMPARED = [
    ("tt24-8b-8gpu-fsdp", ["8b-fsdp8", "8b-fsdp8-ac", "8b-fsdp8-sac", "8b-fsdp8-sac-unb"],
     "torchtitan ran selective per-op AC, which the `-sac` rows run too (the like-for-like row; none and every "
     "layer bracket it); on a 96 GB HBM2e H100 at 500 W, for which no hardware file exists (`h100-sxm` is the 80 GB "
     "700 W part, 79.2 GiB usable: the published 82.4 GiB would not fit it)"),
    ("tt24-8b-8gpu-fsdp-compile", ["8b-fsdp8", "8b-fsdp8-ac", "8b-fsdp8-sac", "8b-fsdp8-sac-unb"],
     "as above, and torch.compile (fused elementwise/norm kernels, 16 % faster and 5.4 GiB smaller in torchtitan's "
     "own table): dlsim runs the eager op graph"),
    ("tt24-8b-128gpu-fsdp", ["8b-fsdp128", "8b-fsdp128-ac", "8b-fsdp128-sac"],
     "as the 8-GPU row; 16 nodes over RDMA (the hardware file's 400 Gb/s NIC per GPU, not fitted to any "
     "measurement)"),
    ("tt24-8b-128gpu-fsdp-compile", ["8b-fsdp128", "8b-fsdp128-ac", "8b-fsdp128-sac"],
     "as above, and torch.compile"),
    ("tt25-8b-64gpu-bf16-vanillatp", ["8b-fsdp8tp8-b12", "8b-fsdp8tp8-b12-unb", "8b-fsdp8tp8-b12-ac",
                                      "8b-fsdp8tp8-b12-sac"],
     "torchtitan ran selective per-op AC and torch.compile on the 96 GB 500 W H100; dlsim brackets SAC with none "
     "(out of memory on 80 GB; with memory unbounded it would need 98 GiB live) and every layer. The tensor-parallel "
     "collectives are on the critical path in both (no async TP, as published); like torchtitan's they carry bf16 "
     "activations (FSDP2's bf16 param_dtype computes in bf16: docs/multi-gpu.md, Mixed precision)"),
    ("tt25-70b-256gpu-bf16-vanillatp", ["70b-fsdp32tp8-ac", "70b-fsdp32tp8-ac-unb"],
     "full AC as published; it fits 80 GB in dlsim (48 GiB live), and the run with memory unbounded takes the same "
     "time within 1 %. torch.compile and the 500 W part as above"),
    ("tt24b-405b-128gpu-fsdp16-tp8", ["405b-fsdp16tp8-ac", "405b-fsdp16tp8-ac-unb"],
     "full AC as published (MFU 29.0 %); a 95 GB lower-TDP H100 (no hardware file), compile not stated. It fits "
     "80 GB in dlsim (59 GiB live)"),
]


def experiment(key, model, gpus, parallel, swap, batch, seq, hw):
    x = {
        "model": os.path.join(ROOT, MODEL_FILES[model]) if model in MODEL_FILES else model,
        "batch": batch, "seq_len": seq, "hw": hw,
        "pool": "pytorch-caching", "swap": swap, "concurrency": "serial", "iterations": 2,
        "precision": "mixed-bf16", "optimizer": "adamw", "parallel": parallel,
    }
    if hw == UNBOUNDED:
        x["hw"], x["hw_override"] = "h100-sxm", {"memory": {"total_mib": 4000000}}
    return x


def run(dlsim, row, tmp):
    return run_doc(dlsim, row[0], experiment(*row), tmp)


def run_doc(dlsim, key, doc, tmp):
    path = os.path.join(tmp, key + ".yaml")
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    p = subprocess.run([dlsim, "run", "--json", path], capture_output=True, text=True)
    try:
        return json.loads(p.stdout)  # a simulated out-of-memory is a result (exit 3) with "oom": true
    except ValueError:
        msg = (p.stderr.strip() or p.stdout.strip()).splitlines()
        return {"error": (msg[-1] if msg else "exit %d" % p.returncode).replace(tmp + os.sep, "")}


def gib(v):
    return "%.1f" % (v / GIB)


def summary(r):
    """The cells of one run: (peak GiB reserved, breakdown, tok/s/GPU, MFU %, iteration ms, exposed comm ms)."""
    if "error" in r or r.get("oom"):
        return None
    # At the live peak: the reservation's peak is held from its first moment on, often when little is live, so
    # its breakdown is mostly cached free blocks; the live peak says what the bytes are.
    at = r["memory_breakdown"]["at_peak_live"]
    parts = [gib(at[c]) for c in ("weights", "gradients", "optimizer_state", "gathered_parameters", "activations",
                                  "communication_buckets", "workspaces", "allocator_overhead")]
    return {
        "peak": r["peak_reserved_bytes"] / GIB,
        "live": r["peak_live_bytes"] / GIB,
        "breakdown": " / ".join(parts),
        "tok": r["tokens_per_s_per_gpu"],
        "mfu": 100.0 * r["mfu"],
        "iter_ms": r["iteration_time_us"] / 1000.0,
        "exposed_ms": r["exposed_communication_time_us"] / 1000.0,
    }


def layout_text(par):
    return "`{" + ", ".join("%s: %s" % (k, str(v).lower() if isinstance(v, bool) else v)
                            for k, v in par.items()) + "}`"


def source_commit():
    """The last commit that changed anything but results/: what the numbers depend on (stable across the commit
    that records them, so --check passes after it)."""
    return subprocess.run(["git", "log", "-1", "--format=%h", "--", ".", ":(exclude)results"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout.strip()


def matrix_table(results):
    out = ["Generated by `python3 validate/multi_gpu_report.py --write` (dlsim built from commit %s)." %
           source_commit(), "",
           "| model | GPUs | layout | AC | batch x seq | peak reserved GiB/GPU | peak live GiB | at the live peak: "
           "weights / grads / optimizer / gathered params / activations / comm buckets / workspaces / reserved but "
           "free (GiB) | iteration ms | tok/s/GPU | MFU % | exposed comm ms |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for row in MATRIX:
        key, model, gpus, par, swap, batch, seq, hw = row
        s = results[key]
        ac = "none" if swap == "none" else ("selective op" if swap.get("selective") == "op" else "every 1")
        head = "| %s | %d | %s | %s | %d x %d | " % (model + (" (memory unbounded)" if hw == UNBOUNDED else ""), gpus,
                                                   layout_text(par), ac, batch, seq)
        if s is None:
            out.append(head + "%s | — | — | — | — | — | — |" % results["_err_" + key])
        else:
            out.append(head + "%.1f | %.1f | %s | %.1f | %.0f | %.1f | %.1f |" % (
                s["peak"], s["live"], s["breakdown"], s["iter_ms"], s["tok"], s["mfu"], s["exposed_ms"]))
    return out


def pct(a, b):
    return "%+.0f %%" % (100.0 * (a - b) / b)


def compared_table(results, points):
    out = ["| published id | published tok/s/GPU | published peak GiB | dlsim row | dlsim tok/s/GPU | difference | "
           "dlsim peak GiB | difference | why they differ |", "|---|---|---|---|---|---|---|---|---|"]
    for pid, keys, why in COMPARED:
        figs = {f["quantity"]: f["value"] for f in points[pid]["figures"]}
        tok, mem = figs.get("tokens_per_s_per_gpu"), figs.get("peak_memory")
        for i, key in enumerate(keys):
            s = results[key]
            ac = ("AC selective op" if "-sac" in key else "AC every 1" if "-ac" in key else "AC none") + \
                (", memory unbounded" if key.endswith("-unb") else "")
            cell = "`%s` (%s)" % (key, ac)
            lead = "| %s | %s | %s | " % (pid, "{:,}".format(tok) if tok else "—", mem if mem else "—") \
                if i == 0 else "| | | | "
            reason = why if i == 0 else ""
            if s is None:
                out.append(lead + "%s | %s | — | — | — | %s |" % (cell, results["_err_" + key], reason))
                continue
            # Unbounded, the caching allocator never has to release its cache: the reservation means nothing, the
            # live peak is what the run needs.
            peak = "%.1f" % s["peak"] if not key.endswith("-unb") else "%.1f live" % s["live"]
            out.append(lead + "%s | %.0f | %s | %s | %s | %s |" % (
                cell, s["tok"], pct(s["tok"], tok) if tok else "—", peak,
                pct(s["peak"], mem) if mem and not key.endswith("-unb") else "—", reason))
    return out


def record(results, key, r, read):
    """results[key] = read(r), and for a run that did not complete the reason under "_err_" + key."""
    results[key] = read(r)
    if results[key] is None:
        if r.get("oom"):
            why = "OOM (%s GiB reserved when %s)" % (gib(r["peak_reserved_bytes"]), r["oom_where"])
        else:
            why = "error: " + r["error"]
        results["_err_" + key] = why.replace("|", "/")


def replace(text, marker, lines):
    begin, end = "<!-- %s: begin -->" % marker, "<!-- %s: end -->" % marker
    i, j = text.index(begin), text.index(end)
    return text[:i + len(begin)] + "\n" + "\n".join(lines) + "\n" + text[j:]


def main(argv):
    dlsim = os.path.join(ROOT, "build", "bin", "dlsim")
    if "--dlsim" in argv:
        dlsim = argv[argv.index("--dlsim") + 1]
    with open(PUBLISHED) as f:
        points = {p["id"]: p for p in yaml.safe_load(f)["points"]}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for row in MATRIX:
            r = run(dlsim, row, tmp)
            s = summary(r)
            results[row[0]] = s
            if s is None:
                if r.get("oom"):
                    why = "OOM (%s GiB reserved when %s)" % (gib(r["peak_reserved_bytes"]), r["oom_where"])
                else:
                    why = "error: " + r["error"]
                results["_err_" + row[0]] = why.replace("|", "/")
        # The A100 section and the model-state section (validate/multi_gpu_a100.py, multi_gpu_model_states.py).
        for key, doc in multi_gpu_a100.runs():
            record(results, key, run_doc(dlsim, key, doc, tmp), summary)
        for key, doc in multi_gpu_model_states.runs():
            record(results, key, run_doc(dlsim, key, doc, tmp), multi_gpu_model_states.states)
    with open(PAGE) as f:
        page = f.read()
    new = replace(page, "dlsim matrix", matrix_table(results))
    new = replace(new, "dlsim vs published", compared_table(results, points))
    generated = ["Generated by `python3 validate/multi_gpu_report.py --write` (dlsim built from commit %s)." %
                 source_commit(), ""]
    new = replace(new, "dlsim a100 rows", generated + multi_gpu_a100.matrix_lines(results))
    new = replace(new, "dlsim a100 vs published", multi_gpu_a100.compared_lines(results, points, pct))
    new = replace(new, "dlsim model states", generated + multi_gpu_model_states.lines(results, points, pct))
    if "--check" in argv:
        # The commit line is left out of the comparison: a later commit that moves no number is not a stale page.
        def strip(t):
            return re.sub(r"dlsim built from commit [0-9a-f]+", "dlsim built from commit ?", t)
        if strip(new) != strip(page):
            print("results/multi-gpu.md differs from what validate/multi_gpu_report.py generates; rerun --write",
                  file=sys.stderr)
            return 1
        return 0
    if "--write" in argv:
        with open(PAGE, "w") as f:
            f.write(new)
    else:
        sys.stdout.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
