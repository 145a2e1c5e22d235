"""GPT-2 small's allocator segments step by step (issue 29), for memory_fidelity.py's report: the segments PyTorch
held after each warm-up step on the lent H200 of session 12 (results/fidelity/data/h200-2026-11-28c/,
memory-truth-gpt2-{hf,none}-segments.json: torch_memory_truth.py's `warmup_steps`, each segment with its live blocks,
from torch.cuda.memory_snapshot() without a memory history) beside dlsim's after each iteration (`dlsim run
--memory-snapshot`: the pool's cudaMalloc calls and the blocks live in each segment, replayed from the snapshot's
device trace), for the zoo's `gpt2-small` and the recorded step, with and without Hugging Face's checkpointing.

The quantity that decides this case's reserved peak: the loss's backward needs three free blocks of the fp32 logits'
size at once (8 x 1024 x 50,257 x 4 B, 1,572 MiB segments), so anything that the second step's forward leaves live in
one of those segments makes the backward open a fourth. The forward's last block that lives into the backward is
`lm_head`'s bf16 copy of the tied weight (50,257 x 768 x 2 B, 73.6 MiB, autocast's cast, saved by the matmul): where
the other segments have no free block that large, it lands at the start of a free logits segment. The report gives
the free bytes outside the logits' segments after the first step and, for dlsim, the largest free block outside them
when that cast is asked for in the second step.
"""
import collections
import json
import pathlib

from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this
import memory_h200_lm as lm
from memory_segment_openings import snapshot_run

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data" / "h200-2026-11-28c"
MIB = 1 << 20
VOCAB, HIDDEN, BATCH, SEQ = 50257, 768, 8, 1024
LOGITS_F32 = BATCH * SEQ * VOCAB * 4
LOGITS_SEGMENT = -(-LOGITS_F32 // (2 * MIB)) * 2 * MIB  # the allocator's 2 MiB rounding above 10 MiB: 1,572 MiB
WEIGHT_BF16 = VOCAB * HIDDEN * 2  # lm_head's autocast copy of the tied wte
# (label, measurement, the zoo's swap for it, the recorded step's name)
CASES = (("HF checkpointing", "memory-truth-gpt2-hf-segments.json", {"name": "checkpoint", "every": 1}, lm.TRACE_HF),
         ("no checkpointing", "memory-truth-gpt2-none-segments.json", "none", lm.TRACE))


def mib(b):
    return f"{b / MIB:,.0f}"


def steps_of(events):
    """A dlsim snapshot's device trace replayed iteration by iteration (an alloc's frame line is its iteration, -1
    setup) -> (layouts, openings, casts): layouts[i] = [(segment bytes, [live block bytes in address order])] in address
    order once iteration i is over (just before the first alloc of a later one; the last at the trace's end);
    openings[i] = [(segment bytes, request bytes, request name)] for the cudaMallocs iteration i made (a segment_alloc
    precedes the alloc it serves); casts[i] = (largest free gap outside the logits-sized segments, the segment the
    request went to) at iteration i's first request of WEIGHT_BF16 bytes, before any segment it opened."""
    segs, live = {}, {}
    layouts, openings, casts = {}, collections.defaultdict(list), {}
    cur, waiting = None, None

    def layout():
        return [(segs[a], [live[b] for b in sorted(live) if a <= b < a + segs[a]]) for a in sorted(segs)]

    def largest_gap_outside_logits():
        best = 0
        for a in sorted(segs):
            if segs[a] == LOGITS_SEGMENT:
                continue
            at = a
            for b in sorted(x for x in live if a <= x < a + segs[a]):
                best = max(best, b - at)
                at = b + -(-live[b] // 512) * 512  # the block's 512-B rounded size
            best = max(best, a + segs[a] - at)
        return best

    for e in events:
        if e["action"] == "alloc":
            it = e["frames"][0]["line"] if e.get("frames") else cur
            if cur is not None and it is not None and it > cur:
                layouts[cur] = layout()
            if cur is None or (it is not None and it > cur):
                cur = it
            if e["size"] == WEIGHT_BF16 and cur not in casts:  # what the allocator could choose from
                casts[cur] = (largest_gap_outside_logits(), None)
            if waiting is not None:  # the segment this alloc opened: after the layout of the iteration before
                segs[waiting[0]] = waiting[1]
            if waiting is not None:
                openings[cur].append((waiting[1], e["size"], e["frames"][0]["name"] if e.get("frames") else "?"))
                waiting = None
            live[e["addr"]] = e["size"]
            if e["size"] == WEIGHT_BF16 and casts[cur][1] is None:
                casts[cur] = (casts[cur][0], next(segs[a] for a in segs if a <= e["addr"] < a + segs[a]))
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
        elif e["action"] == "segment_alloc":
            waiting = (e["addr"], e["size"])
        elif e["action"] == "segment_free":
            segs.pop(e["addr"], None)
    if cur is not None:
        layouts[cur] = layout()
    return layouts, openings, casts


def run_snapshot(dlsim, keys, tag):
    """dlsim's GPT-2 step (memory_fidelity.py's experiment keys) on h200 -> (result JSON, steps_of its trace)."""
    doc = {"batch": BATCH, "hw": lm.HW, "pool": "pytorch-caching", "swap": "none", "concurrency": "serial",
           "iterations": 3}
    doc.update(keys)
    result, events = snapshot_run(dlsim, doc, f"gpt2-segments-{tag}", "memory_gpt2_segments")
    return result, steps_of(events)


def measured_steps(path):
    """[(segment bytes, [live block bytes])] after each warm-up step of a torch_memory_truth.py measurement."""
    case = json.loads((DATA / path).read_text())["cases"][0]
    if case.get("status") != "ok" or not case.get("warmup_steps"):
        raise SystemExit(f"memory_gpt2_segments: {DATA / path}: no warm-up steps with segments (status "
                         f"{case.get('status')})")
    return case, [[(s, live) for s, _, live in w["segments"]] for w in case["warmup_steps"]]


def sizes(segments):
    """'3 x 1,572, 786, ...': segment sizes in MiB, largest first."""
    c = collections.Counter(s for s in segments)
    return ", ".join(f"{n} × {mib(s)}" if n > 1 else mib(s) for s, n in sorted(c.items(), reverse=True)) or "none"


def opened(before, after):
    """The segment sizes of `after` that `before` did not hold (the allocator never freed one here)."""
    return list((collections.Counter(s for s, _ in after) - collections.Counter(s for s, _ in before)).elements())


def outside_logits(layout):
    """(reserved, free) bytes outside the logits-sized segments."""
    res = sum(s for s, _ in layout if s != LOGITS_SEGMENT)
    return res, res - sum(sum(b) for s, b in layout if s != LOGITS_SEGMENT)


def gpt2_segments(dlsim):
    step_rows, open_rows, slack_rows = [], [], []
    for label, path, swap, trace in CASES:
        case, real = measured_steps(path)
        zoo_res, (zoo, zoo_open, zoo_cast) = run_snapshot(dlsim, dict(lm.KEYS, swap=swap), "zoo-" + label[:2])
        tr_res, (tr, tr_open, tr_cast) = run_snapshot(dlsim, {"model": str(dlsim.trace(trace))}, "tr-" + label[:2])
        for i, r in enumerate(real):
            cells = [f"{len(r)} / {mib(sum(s for s, _ in r))}"]
            for lay in (zoo, tr):
                d = lay.get(i)
                cells.append("—" if d is None else f"{len(d)} / {mib(sum(s for s, _ in d))} "
                             f"({pct(sum(s for s, _ in d), sum(s for s, _ in r))})")
            step_rows.append(f"| {label} | {i + 1} | " + " | ".join(cells) + " |")
        for i in range(len(real)):
            real_new = opened(real[i - 1] if i else [], real[i])
            if i and not real_new and not zoo_open.get(i) and not tr_open.get(i):
                continue
            step = "1 (with setup)" if i == 0 else str(i + 1)
            keys = (-1, 0) if i == 0 else (i,)  # -1: setup (the parameters)
            z = [s for k in keys for s, _, _ in zoo_open.get(k, [])]
            t = [s for k in keys for s, _, _ in tr_open.get(k, [])]
            open_rows.append(f"| {label} | {step} | {sizes(real_new)} | {sizes(z)} | {sizes(t)} |")
        m_res, m_free = outside_logits(real[0])
        cells = [f"{mib(m_res)} / {mib(m_free)}"]
        for lay, cast in ((zoo, zoo_cast), (tr, tr_cast)):
            res, free = outside_logits(lay[0])
            gap, seg = cast.get(1, (None, None))
            where = "—" if seg is None else ("a logits segment" if seg == LOGITS_SEGMENT else f"a {mib(seg)} MiB one")
            largest = "—" if gap is None else f"{gap / MIB:,.1f}"
            cells.append(f"{mib(res)} / {mib(free)} | {largest} | {where}")
        slack_rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join([
        "Segments / reserved MiB held after each warm-up step (measured) and after each of dlsim's iterations (the "
        "first is PyTorch's lazy first step), dlsim's error against the measurement in brackets:", "",
        "| case | after step | measured | dlsim zoo | dlsim recorded |", "|---|---:|---:|---:|---:|", *step_rows, "",
        "The segments each step opened, MiB (the first step's with the parameters' before it):", "",
        "| case | step | measured | dlsim zoo | dlsim recorded |", "|---|---|---|---|---|", *open_rows, "",
        f"After the first step, outside the logits-sized ({mib(LOGITS_SEGMENT)} MiB) segments: reserved / free MiB; "
        f"for dlsim also the largest free block outside them when the second step asks for `lm_head`'s bf16 weight "
        f"({WEIGHT_BF16:,} B = {WEIGHT_BF16 / MIB:.1f} MiB), MiB, and where that request went:", "",
        "| case | measured | dlsim zoo | largest free block | went to | dlsim recorded | largest free block | "
        "went to |",
        "|---|---:|---:|---:|---|---:|---:|---|", *slack_rows])
