"""The lent H100's memory cases (results/fidelity/data/h100-2026-11-27c/) against dlsim, for memory_fidelity.py's
report: Qwen2.5-0.5B b4 s2048 mixed-bf16 AdamW without checkpointing (memory-truth.json, a snapshot with Python
stacks) and the peaks of the 15 eager step profiles (2 Hugging Face causal LMs, 13 CNNs; step-profiles.json).

dlsim runs on `h100-sxm` (its kernel model and PyTorch's eager host change the clock only; its memory is what the
harness measured on an H100: the memory total and cuDNN's workspace per convolution, as h100-sxm-harness.yaml), pool
pytorch-caching, no swap, serial, 3 iterations, as for the H200 cases.
"""
import collections
import json
import pathlib
import re

from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data" / "h100-2026-11-27c"
HW = "h100-sxm"
MIB = 1 << 20

# step-profiles case -> (label, zoo experiment keys or None where the zoo has no such model, trace file name)
LLM_KEYS = {"precision": "mixed-bf16", "optimizer": "adamw"}
CASES = {
    "Qwen2.5-0.5B-b4-s2048-mixed-bf16": ("Qwen2.5-0.5B b4 s2048 bf16 AdamW",
                                         dict(model="qwen2.5-0.5b", seq_len=2048, **LLM_KEYS),
                                         "qwen2.5-0.5b-b4-s2048"),
    # The measured GPT-2 is GPT2Model on a mean loss (frontend/torch/model_specs.py did not yet take
    # GPT2LMHeadModel for a causal LM); the zoo's gpt2-small is the causal LM.
    "gpt2-b8-s1024-mixed-bf16": ("GPT-2 small b8 s1024 bf16 AdamW (measured: GPT2Model, mean loss)",
                                 dict(model="gpt2-small", seq_len=1024, **LLM_KEYS), "gpt2-b8-s1024"),
}
NOT_IN_ZOO = {"efficientnet_b0", "shufflenet_v2_x1_0"}


def mib(b):
    return f"{b / MIB:,.0f}"


def case_of(record):
    """(label, zoo keys or None, trace name, batch) of a step-profiles record."""
    if record["case"] in CASES:
        label, keys, trace = CASES[record["case"]]
        return label, keys, trace, record["batch"]
    name, b = record["case"].rsplit("-b", 1)
    return record["case"], (None if name in NOT_IN_ZOO else {"model": name}), record["case"], int(b)


def peaks(dlsim):
    """Every step profile's measured peaks against the zoo graph and the recorded step on the H100 file."""
    recs = json.loads((DATA / "step-profiles.json").read_text())["records"]
    rows, errs = [], {"zr": [], "tr": [], "za": [], "ta": []}
    for r in recs:
        label, keys, trace, batch = case_of(r)
        res, alloc = r["max_memory_reserved_bytes"], r["max_memory_allocated_bytes"]
        tr = dlsim.run({"model": str(dlsim.trace(trace))}, batch, HW)
        cells = []
        if keys is None:
            cells = ["—", "—"]
        else:
            zoo = dlsim.run(keys, batch, HW)
            cells = [f"{mib(zoo['peak_reserved_bytes'])} ({pct(zoo['peak_reserved_bytes'], res)})",
                     f"{mib(zoo['peak_live_bytes'])} ({pct(zoo['peak_live_bytes'], alloc)})"]
            if r["case"] not in CASES:
                errs["zr"].append(zoo["peak_reserved_bytes"] / res - 1)
                errs["za"].append(zoo["peak_live_bytes"] / alloc - 1)
        if r["case"] not in CASES:
            errs["tr"].append(tr["peak_reserved_bytes"] / res - 1)
            errs["ta"].append(tr["peak_live_bytes"] / alloc - 1)
        rows.append(f"| {label} | {mib(res)} | {cells[0]} | {mib(tr['peak_reserved_bytes'])} "
                    f"({pct(tr['peak_reserved_bytes'], res)}) | {mib(alloc)} | {cells[1]} | "
                    f"{mib(tr['peak_live_bytes'])} ({pct(tr['peak_live_bytes'], alloc)}) |")

    def mape(e):
        return (f"{100.0 * sum(abs(x) for x in e) / len(e):.1f} % over {len(e)} (signed mean "
                f"{100.0 * sum(e) / len(e):+.1f} %, largest {100.0 * max(abs(x) for x in e):.1f} %)")
    return "\n".join([f"MiB, over 10 eager steps; dlsim on `{HW}`, its error in brackets; — where dlsim's zoo has "
                      "no such model.", "",
                      "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | dlsim zoo live | "
                      "dlsim traced live |", "|---|---:|---:|---:|---:|---:|---:|"] + rows +
                     ["", f"CNNs only, mean absolute error of reserved: zoo {mape(errs['zr'])}; traced "
                          f"{mape(errs['tr'])}. Of allocated: zoo {mape(errs['za'])}; traced {mape(errs['ta'])}."])


def frame_group(frame):
    """A snapshot frame without its 'no model frame' prefix."""
    return frame.replace("(no model frame) ", "")


def traced_live_at_peak(trace_path):
    """What the recorded step holds at its own peak: bytes and storages per (kind, aten op, module with the layer
    index dropped), largest first."""
    d = json.loads(pathlib.Path(trace_path).read_text())
    peak, ops = d["summary"]["peak_at_op"], d["ops"]
    out, count = collections.Counter(), collections.Counter()
    for s in d["storages"]:
        a = -1 if s["allocated_at"] is None else s["allocated_at"]
        f = len(ops) if s["freed_at"] is None else s["freed_at"]
        if not a <= peak < f:
            continue
        key = s["kind"]
        if s["allocated_at"] is not None:
            module = re.sub(r"\.\d+(?=\.|$)", ".N", ops[a].get("module") or "")
            key = f"{ops[a]['name']} in {module or '(top)'}"
        out[key] += s["bytes"]
        count[key] += 1
    return ops[peak]["name"], out, count


def qwen_snapshot(dlsim):
    """The Qwen case's snapshot: live at the measured peak by frame, beside the recorded step's live set at its
    peak, and the peaks."""
    c = json.loads((DATA / "memory-truth.json").read_text())["cases"][0]
    m, s = c["measured"], c["snapshot"]
    label, keys, trace = CASES["Qwen2.5-0.5B-b4-s2048-mixed-bf16"]
    zoo = dlsim.run(keys, 4, HW)
    tr = dlsim.run({"model": str(dlsim.trace(trace))}, 4, HW)
    res, alloc = m["max_memory_reserved"], m["max_memory_allocated"]
    peak_rows = [f"| {label}, no checkpointing | {mib(res)} | {mib(zoo['peak_reserved_bytes'])} "
                 f"({pct(zoo['peak_reserved_bytes'], res)}) | {mib(tr['peak_reserved_bytes'])} "
                 f"({pct(tr['peak_reserved_bytes'], res)}) | {mib(alloc)} | {mib(zoo['peak_live_bytes'])} "
                 f"({pct(zoo['peak_live_bytes'], alloc)}) | {mib(tr['peak_live_bytes'])} "
                 f"({pct(tr['peak_live_bytes'], alloc)}) | {m['num_device_alloc']} / {zoo['device_mallocs']} / "
                 f"{tr['device_mallocs']} | {mib(m['inactive_split_bytes.all.peak'])} |"]
    return "\n".join(
        ["MiB. dlsim's error against the measurement in brackets. Segments: cudaMalloc calls measured / zoo / traced.",
         "", "| case | measured reserved | dlsim zoo | dlsim traced | measured allocated | dlsim zoo live | "
         "dlsim traced live | segments | inactive split (measured) |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        + peak_rows + live_tables(s, dlsim.trace(trace)))


def live_tables(snapshot, trace_path):
    """What is live at the measured peak, by the first frame of each block's stack, and at the recorded step's own
    peak, by the aten op and module that allocated each storage: the lines of both tables."""
    frames = sorted(snapshot["live_at_peak_by_frame"], key=lambda g: (-g["bytes"], g["frame"]))
    measured = [f"| {frame_group(g['frame'])} | {g['blocks']} | {mib(g['bytes'])} |" for g in frames]
    op, live, count = traced_live_at_peak(trace_path)
    recorded = [f"| {k} | {count[k]} | {mib(v)} |" for k, v in sorted(live.items(), key=lambda kv: (-kv[1], kv[0]))
                if v >= 16 * MIB]
    small = sum(v for v in live.values() if v < 16 * MIB)
    return (["", f"Live at the measured peak of allocated bytes ({mib(snapshot['peak_allocated_bytes'])} MiB in "
                 f"{snapshot['live_blocks_at_peak']} blocks), by the first frame of each block's Python stack:", "",
             "| frame | blocks | MiB |", "|---|---:|---:|"] + measured +
            ["", f"Live at the recorded step's own peak (at `{op}`, {mib(sum(live.values()))} MiB), by the aten op "
                 f"and module that allocated each storage (layer index dropped; {mib(small)} MiB in groups under 16 "
                 "MiB not listed):", "", "| allocated by | storages | MiB |", "|---|---:|---:|"] + recorded)
