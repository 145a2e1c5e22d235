"""The model-state section of results/multi-gpu.md: the ZeRO paper's Table 1 (zero-t1-*) and DeepSpeed's memory
estimator (ds-estimator-t5-3b-8gpu-*) beside dlsim's measured model states per GPU.

Used by validate/multi_gpu_report.py (which owns the runs and the page's markers). Each row runs one rank of
Llama-2-7B (the `llama2-7b` preset, 6,738,415,616 parameters) under the point's layout: `{zero: 1, dp: N}` for
ZeRO's P_os, `{zero: 2, dp: N}` for P_os+g, `{fsdp: N}` for P_os+g+p (ZeRO-3), with fp16 mixed precision
(`mixed-fp16`: autocast, fp32 parameters as master weights) and AdamW, batch 1 x 64 tokens so that activations
do not matter, and the GPU's memory raised by `hw_override` so that every layout runs (the figure is bytes, not a
fit). dlsim's figure is the run's `memory_breakdown.at_peak_model_states`: weights + gradients + optimizer state
at the first moment their sum peaks. No model has exactly the published size, so the table gives dlsim's bytes
per parameter and those bytes times the published parameter count (the states scale with it; padding of the
dim-0 chunks and buffers differ by well under 1 %).
"""

MODEL = "llama2-7b"
MODEL_PARAMS = 6_738_415_616  # workloads/llama_models.h: meta-llama/Llama-2-7b-hf
BATCH, SEQ = 1, 64
HW = "a100-sxm-80gb"
UNBOUNDED = {"memory": {"total_mib": 1_000_000}}

# ZeRO's stage of a point -> dlsim's layout for N ranks; the stage's per-parameter bytes in ZeRO's fp16 accounting
# (2 B fp16 parameters, 2 B fp16 gradients, K = 12 B of fp32 master weights and Adam moments) and in dlsim's
# PyTorch AMP accounting (4 B fp32 parameters, which are the master weights, 4 B fp32 gradients, 8 B moments).
STAGES = {
    1: (lambda n: {"zero": 1, "dp": n}, "2 + 2 + 12/N", "4 + 4 + 8/N"),
    2: (lambda n: {"zero": 2, "dp": n}, "2 + 14/N", "4 + 12/N (+ a bucket's full gradients)"),
    3: (lambda n: {"fsdp": n, "param_dtype": "fp16"}, "16/N", "16/N (+ a unit's unsharded gradients)"),
    # Offloading (DeepSpeed's estimator rows): ZeRO-Offload on ZeRO-2 (`zero-offload` on `{zero: 2}`: the optimizer
    # partition, master weights and moments on the host), on ZeRO-3 (`zero-offload` on `fsdp`), and ZeRO-3 with the
    # parameters offloaded too (`param-offload` on `fsdp`: FSDP's CPUOffload).
    "2o": (lambda n: {"zero": 2, "dp": n}, "", "4 + 4/N on the device (AMP's fp32 replica, the partition)"),
    "3o": (lambda n: {"fsdp": n, "param_dtype": "fp16"}, "", "4/N on the device (the fp32 shard)"),
    "3a": (lambda n: {"fsdp": n, "param_dtype": "fp16"}, "", "parameters fetched as used"),
}
SWAPS = {"2o": "zero-offload", "3o": "zero-offload", "3a": "param-offload"}
# (published id, ZeRO stage, N) in the page's order; the offloading estimator rows are listed apart (not run).
POINTS = [("zero-t1-7p5b-%s-dp%d" % (col, n), stage, n)
          for n in (1, 4, 16, 64, 256, 1024) for col, stage in (("os", 1), ("osg", 2), ("osgp", 3))]
POINTS += [("zero-t1-128b-osgp-dp64", 3, 64), ("zero-t1-1t-osgp-dp1024", 3, 1024),
           ("ds-estimator-t5-3b-8gpu-z2-none", 2, 8), ("ds-estimator-t5-3b-8gpu-z3-none", 3, 8),
           ("ds-estimator-t5-3b-8gpu-z2-optcpu", "2o", 8), ("ds-estimator-t5-3b-8gpu-z3-optcpu", "3o", 8),
           ("ds-estimator-t5-3b-8gpu-z3-allcpu", "3a", 8)]
# DeepSpeed's estimator counts otherwise than the paper (memory.rst's estimate_zero2/3_model_states_mem_needs).
PUBLISHED_BPP = {"ds-estimator-t5-3b-8gpu-z2-none": "4 + 16/N (estimator)",
                 "ds-estimator-t5-3b-8gpu-z3-none": "18/N + 4 x largest layer / Ψ (estimator)",
                 "ds-estimator-t5-3b-8gpu-z2-optcpu": "2 (estimator: the fp16 parameters)",
                 "ds-estimator-t5-3b-8gpu-z3-optcpu": "2/N + 4 x largest layer / Ψ (estimator)",
                 "ds-estimator-t5-3b-8gpu-z3-allcpu": "4 x largest layer / Ψ (estimator)"}
NOT_RUN = {}


def experiment(stage, n):
    return {
        "model": MODEL, "batch": BATCH, "seq_len": SEQ, "hw": HW, "hw_override": UNBOUNDED,
        "pool": "pytorch-caching", "swap": SWAPS.get(stage, "none"), "concurrency": "serial", "iterations": 2,
        "precision": "mixed-fp16", "optimizer": "adamw", "parallel": STAGES[stage][0](n),
    }


def layout_key(stage, n):
    return "states-z%s-n%d" % (stage, n)


def runs():
    """(key, experiment) of every distinct layout the table needs."""
    seen = {}
    for _pid, stage, n in POINTS:
        seen.setdefault(layout_key(stage, n), experiment(stage, n))
    return list(seen.items())


def states(r):
    """(weights, gradients, optimizer state) bytes at the model states' peak, or None for a run that failed."""
    if "error" in r or r.get("oom"):
        return None
    at = r["memory_breakdown"]["at_peak_model_states"]
    return at["weights"], at["gradients"], at["optimizer_state"]


def psi_of(point):
    for c in point.get("checks", []):
        if c["formula"] == "zero_model_states":
            return c["psi"]
        if c["formula"] == "deepspeed_estimator":
            return c["params"]
    raise ValueError("%s: no check gives the parameter count" % point["id"])


def lines(results, points, pct):
    out = ["| published id | stage, N | Ψ | published | published B/param | dlsim's B/param (AMP) | "
           "dlsim on Llama-2-7B: weights / grads / optimizer GB | dlsim B/param: weights + optimizer, all | "
           "dlsim x Ψ | difference |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for pid, stage, n in POINTS:
        point = points[pid]
        fig = point["figures"][0]
        unit = 2.0 ** 30 if fig["unit"] == "GiB" else 1e9
        psi = psi_of(point)
        _, zero_bpp, dlsim_bpp = STAGES[stage]
        zero_bpp = PUBLISHED_BPP.get(pid, zero_bpp)
        head = "| %s | %s, %d | %s | %s %s | %s | %s | " % (pid, stage, n, "{:.4g}e9".format(psi / 1e9), fig["value"],
                                                           fig["unit"], zero_bpp, dlsim_bpp)
        s = results[layout_key(stage, n)]
        if s is None:
            out.append(head + "%s | — | — | — |" % results["_err_" + layout_key(stage, n)])
            continue
        total = sum(s)
        scaled = total / MODEL_PARAMS * psi / unit
        out.append(head + "%s | %.3f, %.3f | %.3g %s | %s |" % (
            " / ".join("%.2f" % (b / 1e9) for b in s), (s[0] + s[2]) / MODEL_PARAMS, total / MODEL_PARAMS, scaled,
            fig["unit"], pct(scaled, fig["value"])))
    for pid, why in NOT_RUN.items():
        fig = points[pid]["figures"][0]
        out.append("| %s | — | — | %s %s | — | — | not run: %s | — | — | — |" % (
            pid, fig["value"], fig["unit"], why))
    return out
