"""The LLM memory cases of the second H200 lease of 2026-11-28 (results/fidelity/data/h200-2026-11-28b/) against
dlsim, for memory_fidelity.py's report: Llama 3.2 1B (a model none of dlsim's graphs had been compared with)
at batch 2, sequence 2048, with and without Hugging Face's gradient checkpointing, and Qwen2.5-0.5B with
checkpointing at batch 8, sequence 1024 (the same 8,192 tokens as the first lease's b4 s2048, another shape).
All mixed-bf16 with fp32 AdamW (foreach), measured without the memory history (`--stacks none`): peaks, no snapshot.

dlsim runs on `h200`, pool pytorch-caching, no swap, serial, 3 iterations, as memory_fidelity.py's other H200
cases: the zoo's `llama3.2-1b` / `qwen2.5-0.5b` (`checkpoint` every block for Hugging Face's checkpointing) and the
steps recorded by `dlsim import-torch` (data/memory-traces/llama3.2-1b-b2-s2048, llama3.2-1b-hf-b2-s2048,
qwen2.5-0.5b-hf-b8-s1024).
"""
import json
import pathlib

from memory_h100 import mib  # memory_fidelity.py puts validate/torch/ on the path before importing this
from memory_h200_lm import peak_cells

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-28b"
HW = "h200"
CKPT = {"name": "checkpoint", "every": 1}
# (memory-truth key, label, zoo keys, batch, recorded step)
CASES = [
    ("llama1b-b2-none", "Llama 3.2 1B b2 s2048, no checkpointing",
     {"model": "llama3.2-1b", "seq_len": 2048}, 2, "llama3.2-1b-b2-s2048"),
    ("llama1b-b2-hf", "Llama 3.2 1B b2 s2048, HF checkpointing",
     {"model": "llama3.2-1b", "seq_len": 2048, "swap": CKPT}, 2, "llama3.2-1b-hf-b2-s2048"),
    ("qwen-b8-s1024-hf", "Qwen2.5-0.5B b8 s1024, HF checkpointing",
     {"model": "qwen2.5-0.5b", "seq_len": 1024, "swap": CKPT}, 8, "qwen2.5-0.5b-hf-b8-s1024"),
]
MIXED = {"precision": "mixed-bf16", "optimizer": "adamw"}


def llama(dlsim):
    """Per case: measured reserved and allocated against the zoo graph and the recorded step, and the segments."""
    truth = json.loads((DATA / "memory-truth.json").read_text())
    rows, errors = [], {"zoo": [], "traced": []}
    for key, label, keys, batch, trace in CASES:
        case = truth[key]["cases"][0]
        if case["status"] != "ok":
            raise SystemExit(f"memory_h200_llama: {key}: status {case['status']}, not ok")
        m = case["measured"]
        zoo = dlsim.run(dict(keys, **MIXED), batch, HW)
        tr = dlsim.run({"model": str(dlsim.trace(trace))}, batch, HW)
        res, alloc = m["max_memory_reserved"], m["max_memory_allocated"]
        errors["zoo"].append(abs(zoo["peak_reserved_bytes"] / res - 1))
        errors["traced"].append(abs(tr["peak_reserved_bytes"] / res - 1))
        rows.append(f"| {label} | {peak_cells(res, alloc, zoo, tr)} | {m['num_device_alloc']} / {zoo['device_mallocs']}"
                    f" / {tr['device_mallocs']} | {mib(m['inactive_split_bytes.all.peak'])} |")
    mean = {k: 100 * sum(v) / len(v) for k, v in errors.items()}
    return "\n".join(
        ["MiB. dlsim on `h200`, its error against the measurement in brackets. Segments: cudaMalloc calls measured / "
         "zoo / traced.", "",
         "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | dlsim zoo live | "
         "dlsim traced live | segments | inactive split (measured) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows +
        ["", f"Mean absolute error of reserved over the {len(CASES)} cases: zoo {mean['zoo']:.1f} %, recorded step "
             f"{mean['traced']:.1f} %."])
