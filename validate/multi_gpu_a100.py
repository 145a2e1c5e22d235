"""The A100 section of results/multi-gpu.md: torchtitan's FSDP2 points on 64 A100 80GB (ids tt24a-*), simulated.

Used by validate/multi_gpu_report.py, which owns the runs (its run() and summary()) and the page's markers; this
file holds the rows and the table. Each published point is set beside the dlsim rows of its model, batch and
sequence on `a100-sxm-80gb` (DGX A100 links, configs/hw/a100-sxm-80gb.yaml: 8 GPUs a node, so 64 GPUs are 8
nodes): AC none and every layer; a selective point (per op, or every N-th layer with N not stated) gets both, a
bracket, as the H100 rows do. The 70B models are the Hub's config.json files in results/multi-gpu/configs/.
Nothing is fitted.
"""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "results", "multi-gpu", "configs")
LLAMA2_70B = os.path.join(CONFIGS, "Llama-2-70b-hf.config.json")
LLAMA3_70B = os.path.join(CONFIGS, "Meta-Llama-3-70B.config.json")
MODEL_NAMES = {LLAMA2_70B: "Llama-2-70b-hf", LLAMA3_70B: "Meta-Llama-3-70B"}

# torchtitan's FSDP2 of April 2024: MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), reshard after
# forward (its default), AdamW.
FSDP64 = {"fsdp": 64, "param_dtype": "bf16", "reduce_dtype": "fp32"}
AC = {"name": "checkpoint", "every": 1}
# torchtitan's selective per-op checkpointing (docs/swap-and-recompute.md): the `ac` field "sac" below.
SAC = {"name": "checkpoint", "selective": "op"}
HW = "a100-sxm-80gb"

UNBOUNDED = {"memory": {"total_mib": 1_000_000}}

# (key, model, batch per GPU, sequence, checkpoint every layer, precision). Each runs twice: on the 80 GB part as
# it is (does it fit?) and with its memory raised by hw_override (key + "-unbounded": what it needs, and its time
# when the 80 GB run does not fit). mixed-bf16 (autocast over fp32 parameters) is what the H100 rows run; the two
# bf16 rows (the model in bf16: no autocast casts, but bf16 master weights and moments) show what the casts cost.
ROWS = [
    ("a100-13b-b2", "llama2-13b", 2, 4096, False, "mixed-bf16"),
    ("a100-13b-b2-ac", "llama2-13b", 2, 4096, True, "mixed-bf16"),
    ("a100-13b-b2-ac-bf16", "llama2-13b", 2, 4096, True, "bf16"),
    ("a100-70b2-b2", LLAMA2_70B, 2, 4096, False, "mixed-bf16"),
    ("a100-70b2-b2-ac", LLAMA2_70B, 2, 4096, True, "mixed-bf16"),
    ("a100-70b2-b2-ac-bf16", LLAMA2_70B, 2, 4096, True, "bf16"),
    ("a100-70b2-b1", LLAMA2_70B, 1, 4096, False, "mixed-bf16"),
    ("a100-70b2-b1-ac", LLAMA2_70B, 1, 4096, True, "mixed-bf16"),
    ("a100-8b-b1", "llama3-8b", 1, 8192, False, "mixed-bf16"),
    ("a100-8b-b1-ac", "llama3-8b", 1, 8192, True, "mixed-bf16"),
    # torchtitan's selective per-op checkpointing, the like-for-like rows of its selective-op points.
    ("a100-13b-b2-sac", "llama2-13b", 2, 4096, "sac", "mixed-bf16"),
    ("a100-70b2-b2-sac", LLAMA2_70B, 2, 4096, "sac", "mixed-bf16"),
    ("a100-70b2-b1-sac", LLAMA2_70B, 1, 4096, "sac", "mixed-bf16"),
    ("a100-8b-b1-sac", "llama3-8b", 1, 8192, "sac", "mixed-bf16"),
    ("a100-70b3-b1-ac", LLAMA3_70B, 1, 8192, True, "mixed-bf16"),
]


def experiment(model, batch, seq, ac, precision, unbounded):
    e = {"model": model, "batch": batch, "seq_len": seq, "hw": HW}
    if unbounded:
        e["hw_override"] = UNBOUNDED
    e.update({"pool": "pytorch-caching", "swap": SAC if ac == "sac" else AC if ac else "none", "concurrency": "serial", "iterations": 2,
              "precision": precision, "optimizer": "adamw", "parallel": FSDP64})
    return e


def runs():
    """(key, experiment) of every run the section needs."""
    out = []
    for key, model, batch, seq, ac, precision in ROWS:
        out.append((key, experiment(model, batch, seq, ac, precision, False)))
        out.append((key + "-unbounded", experiment(model, batch, seq, ac, precision, True)))
    return out


# Common to every point, said once under the table: torchtitan's own model code (a fused RMSNorm kernel, no mask
# tensor), its torch nightly of April 2024 (cuDNN/flash kernels unknown), the A100's form factor and its nodes and
# network (not stated: DGX A100 assumed), and torchtitan's MFU counting every parameter (dlsim's leaves the token
# embedding out).
COMPARED = [
    ("tt24a-llama2-13b-64gpu-noac", ["a100-13b-b2"], "the same configuration: no AC"),
    ("tt24a-llama2-13b-64gpu-sel-layer", ["a100-13b-b2", "a100-13b-b2-ac"],
     "selective layer AC (every N-th block, N not stated) lies between none and every layer"),
    ("tt24a-llama2-13b-64gpu-sel-op", ["a100-13b-b2", "a100-13b-b2-ac", "a100-13b-b2-sac"],
     "selective per-op AC (keeps matmul outputs) lies between none and every layer"),
    ("tt24a-llama2-70b-64gpu-b2-sel-layer-oom", ["a100-70b2-b2", "a100-70b2-b2-ac"],
     "published out of memory: a bracket that fits at every layer and not at none says nothing about N"),
    ("tt24a-llama2-70b-64gpu-b2-sel-op-oom", ["a100-70b2-b2", "a100-70b2-b2-ac", "a100-70b2-b2-sac"],
     "published out of memory, as the row above"),
    ("tt24a-llama2-70b-64gpu-b1-sel-op", ["a100-70b2-b1", "a100-70b2-b1-ac", "a100-70b2-b1-sac"],
     "selective per-op AC between none and every layer"),
    ("tt24a-llama2-70b-64gpu-b2-full", ["a100-70b2-b2-ac", "a100-70b2-b2-ac-bf16"],
     "the same configuration: full AC is every layer"),
    ("tt24a-llama3-8b-64gpu-sel-layer", ["a100-8b-b1", "a100-8b-b1-ac"],
     "selective layer AC (N not stated) between none and every layer"),
    ("tt24a-llama3-8b-64gpu-sel-op", ["a100-8b-b1", "a100-8b-b1-ac", "a100-8b-b1-sac"],
     "selective per-op AC between none and every layer"),
    ("tt24a-llama3-70b-64gpu-full", ["a100-70b3-b1-ac"], "the same configuration: full AC is every layer"),
]


def model_name(model):
    return MODEL_NAMES.get(model, model)


def fits_cell(results, key):
    s = results[key]
    if s is None:
        return results["_err_" + key]
    return "fits: %.1f GiB reserved, %.0f tok/s/GPU" % (s["peak"], s["tok"])


def matrix_lines(results):
    out = ["| key | model | batch x seq | AC | precision | on the 80 GB A100 | memory unbounded: peak live GiB | "
           "at the live peak: weights / grads / optimizer / gathered params / activations / comm buckets / "
           "workspaces / reserved but free (GiB) | iteration ms | tok/s/GPU | MFU % | exposed comm ms |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for key, model, batch, seq, ac, precision in ROWS:
        s = results[key + "-unbounded"]
        head = "| `%s` | %s | %d x %d | %s | %s | %s | " % (
            key, model_name(model), batch, seq, "selective op" if ac == "sac" else "every 1" if ac else "none", precision, fits_cell(results, key))
        if s is None:
            out.append(head + "%s | — | — | — | — | — |" % results["_err_" + key + "-unbounded"])
        else:
            out.append(head + "%.1f | %s | %.1f | %.0f | %.1f | %.1f |" % (
                s["live"], s["breakdown"], s["iter_ms"], s["tok"], s["mfu"], s["exposed_ms"]))
    return out


def compared_lines(results, points, pct):
    out = ["| published id | published | dlsim row | on the 80 GB A100 | dlsim tok/s/GPU (memory unbounded) | "
           "difference | dlsim MFU % | why they differ |", "|---|---|---|---|---|---|---|---|"]
    for pid, keys, why in COMPARED:
        figs = {f["quantity"]: f["value"] for f in points[pid]["figures"]}
        tok = figs.get("tokens_per_s_per_gpu")
        published = "out of memory" if figs.get("oom") else "{:,} tok/s/GPU, MFU {} %".format(tok, figs["mfu"])
        for i, key in enumerate(keys):
            s = results[key + "-unbounded"]
            lead = "| %s | %s | " % (pid, published) if i == 0 else "| | | "
            reason = why if i == 0 else ""
            cell = "`%s` (%s%s)" % (key, "AC selective op" if "-sac" in key else "AC every 1" if "-ac" in key else "AC none",
                                    ", bf16" if key.endswith("-bf16") else "")
            if s is None:
                out.append(lead + "%s | %s | %s | — | — | %s |" % (cell, fits_cell(results, key),
                                                                  results["_err_" + key + "-unbounded"], reason))
                continue
            out.append(lead + "%s | %s | %.0f | %s | %.1f | %s |" % (
                cell, fits_cell(results, key), s["tok"], pct(s["tok"], tok) if tok else "—", s["mfu"], reason))
    return out
