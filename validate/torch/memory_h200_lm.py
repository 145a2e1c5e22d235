"""GPT-2 small as a causal LM on the lent H200 of 2026-11-28 (results/fidelity/data/h200-2026-11-28/) against
dlsim, for memory_fidelity.py's report: batch 8, sequence 1024, mixed-bf16, fp32 AdamW (foreach), no checkpointing
(memory-truth-gpt2-none.json, a snapshot with Python stacks, and the peaks of the step profile's 10 eager steps),
and the same step with Hugging Face's gradient checkpointing: under the memory history it failed on the GPU
(memory-truth-gpt2-hf.json, call 2: its error and the peaks reached before it, no step's peak), without the history
it ran (memory-truth-gpt2-hf-nostacks.json, call 3: peaks only, no snapshot).

dlsim runs on `h200` (the shipped H200 file; memory_fidelity.py's H200 cases use it), pool pytorch-caching, no
swap, serial, 3 iterations, the zoo's `gpt2-small` and the recorded causal-LM step (`dlsim import-torch`,
data/memory-traces/gpt2-lm-b8-s1024); with checkpointing, the zoo's `gpt2-small` with `checkpoint` every block
and the step recorded with Hugging Face's checkpointing (data/memory-traces/gpt2-lm-hf-b8-s1024).
"""
import json
import pathlib

from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this
from memory_h100 import live_tables, mib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-28"
HW = "h200"
KEYS = {"model": "gpt2-small", "seq_len": 1024, "precision": "mixed-bf16", "optimizer": "adamw"}
TRACE = "gpt2-lm-b8-s1024"
TRACE_HF = "gpt2-lm-hf-b8-s1024"
PROFILE_CASE = "gpt2-b8-s1024-mixed-bf16"
LABEL = "GPT-2 small (causal LM) b8 s1024 bf16 AdamW"


def peak_cells(res, alloc, zoo, tr):
    return (f"{mib(res)} | {mib(zoo['peak_reserved_bytes'])} ({pct(zoo['peak_reserved_bytes'], res)}) | "
            f"{mib(tr['peak_reserved_bytes'])} ({pct(tr['peak_reserved_bytes'], res)}) | {mib(alloc)} | "
            f"{mib(zoo['peak_live_bytes'])} ({pct(zoo['peak_live_bytes'], alloc)}) | "
            f"{mib(tr['peak_live_bytes'])} ({pct(tr['peak_live_bytes'], alloc)})")


def gpt2(dlsim):
    """The measured peaks against the zoo graph and the recorded step, the failed checkpointing case as it failed,
    and what is live at the measured and the recorded peaks."""
    case = json.loads((DATA / "memory-truth-gpt2-none.json").read_text())["cases"][0]
    m, s = case["measured"], case["snapshot"]
    profile = next(r for r in json.loads((DATA / "step-profiles.json").read_text())["records"]
                   if r["case"] == PROFILE_CASE)
    zoo = dlsim.run(KEYS, 8, HW)
    tr = dlsim.run({"model": str(dlsim.trace(TRACE))}, 8, HW)
    rows = [f"| {LABEL}, no checkpointing | {peak_cells(m['max_memory_reserved'], m['max_memory_allocated'], zoo, tr)}"
            f" | {m['num_device_alloc']} / {zoo['device_mallocs']} / {tr['device_mallocs']} | "
            f"{mib(m['inactive_split_bytes.all.peak'])} |",
            f"| the same, 10 eager steps (step profile) | "
            f"{peak_cells(profile['max_memory_reserved_bytes'], profile['max_memory_allocated_bytes'], zoo, tr)} | | |"]
    ran = json.loads((DATA / "memory-truth-gpt2-hf-nostacks.json").read_text())["cases"][0]
    if ran["status"] != "ok":
        raise SystemExit(f"memory_h200_lm: memory-truth-gpt2-hf-nostacks.json: status {ran['status']}, not ok")
    rm = ran["measured"]
    ckpt = dlsim.run(dict(KEYS, swap={"name": "checkpoint", "every": 1}), 8, HW)
    tr_hf = dlsim.run({"model": str(dlsim.trace(TRACE_HF))}, 8, HW)
    rows.append(f"| {LABEL}, HF checkpointing (no memory history) | "
                f"{peak_cells(rm['max_memory_reserved'], rm['max_memory_allocated'], ckpt, tr_hf)} | "
                f"{rm['num_device_alloc']} / {ckpt['device_mallocs']} / {tr_hf['device_mallocs']} | "
                f"{mib(rm['inactive_split_bytes.all.peak'])} |")
    failed = json.loads((DATA / "memory-truth-gpt2-hf.json").read_text())["cases"][0]
    fm = failed["measured"]
    notes = [f"Checkpointing row: the zoo's `gpt2-small` with a checkpoint every block, the recording with Hugging "
             f"Face's checkpointing (`{TRACE_HF}`); measured without the memory history (call 3, "
             f"`--stacks none`), so no snapshot. The first attempt, under the history with Python stacks (call 2), "
             f"**failed** ({failed['status']}, after {failed['seconds']:.1f} s: `{failed['error']}`); its peaks up to "
             f"the failure, {mib(fm['max_memory_reserved'])} MiB reserved and {mib(fm['max_memory_allocated'])} MiB "
             f"allocated in {fm['num_device_alloc']} segments, are not a step's and are not compared."]
    return "\n".join(
        ["MiB. dlsim on `h200`, its error against the measurement in brackets. Segments: cudaMalloc calls measured / "
         "zoo / traced.", "", "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | "
         "dlsim zoo live | dlsim traced live | segments | inactive split (measured) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows + [""] + notes + live_tables(s, dlsim.trace(TRACE)))
