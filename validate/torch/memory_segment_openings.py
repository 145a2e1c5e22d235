"""Why dlsim reserves more than PyTorch for Inception-v3 b32 (issue 29), for memory_fidelity.py's report: the
cudaMalloc calls of dlsim's pytorch-caching pool (`dlsim run --memory-snapshot`: each segment and the request that
opened it) set beside what the measured step's memory_stats say of its segments, and one what-if run (Conv2d_2b's records replaced by the requests conv_probe_replay.py finds they imply).

The measurement has no segment list (the H200 run of 2026-11-27 kept only memory_stats and an analysis of the
measured steps' snapshot), but it has the segment counts per pool: the small pool's segments are 2 MiB each, so the
large pool's bytes are max_memory_reserved less 2 MiB per small segment. The what-if replaces the shipped
conv_scratch records of one convolution (Conv2d_2b) by the requests that conv_probe_replay.py shows its probe records
imply; it is a diagnosis, not a fit: nothing shipped changes until the probe is run again (it now records requests).
"""
import json
import pathlib
import pickle
import re
import subprocess

import conv_probe_replay  # noqa: E402  (the requests Conv2d_2b's probe records imply)
from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
DATA = ROOT / "results" / "fidelity" / "data"
MIB = 1 << 20
SMALL_SEGMENT = 2 * MIB  # kSmallBuffer: every small-pool segment
BIG = 150 * MIB  # openings listed one by one: the workspaces and activations of the 147-149 px layers
# Conv2d_2b_3x3 (32 -> 64 channels, 3 x 3, pad 1, at 147 x 147), fp32 NCHW at batch 32, as h200.yaml keys it.
SHAPE = re.compile(r"pass: (\w+), dtype: f32, layout: nchw, n: 32, c: 32, h: 147, w: 147, k: 64, r: 3, s: 3, "
                   r"stride_h: 1, stride_w: 1, pad_h: 1, pad_w: 1, dilation: 1, groups: 1, bytes: (\d+)")
# The H200's step has memory_stats and a snapshot's analysis; the H100's (torch_step_profile.py) its peaks only.
CASES = (("H200", "h200", "h200-2026-11-27b/memory-truth-inception_v3-b32.json"),
         ("H100", "h100-sxm", "h100-2026-11-27c/step-profiles.json"))
# Session 12's H200 (the same software): the segments after each warm-up step (`warmup_steps`, no memory history, so
# no request names), which say which large segments the step opened.
LAYOUT = "h200-2026-11-28c/memory-truth-inception_v3-b32.json"


def mib(b):
    return f"{b / MIB:,.0f}"


def openings(events):
    """[(segment bytes, request bytes, request name)] per segment_alloc of a snapshot's device trace: the pool
    records the segment, then the alloc it serves (torch_memory_truth.segment_openings does the same for PyTorch's
    snapshots, naming the request by its stack; dlsim names it by the tensor)."""
    out, waiting = [], None
    for e in events:
        if e["action"] == "segment_alloc":
            waiting = e["size"]
        elif e["action"] == "alloc" and waiting is not None:
            out.append((waiting, e["size"], e["frames"][0]["name"] if e.get("frames") else "?"))
            waiting = None
    return out


def snapshot_run(dlsim, experiment, name, script):
    """`dlsim run --json --memory-snapshot` of the experiment `experiment` (a dict), written into dlsim.tmp as
    NAME.yaml: (the result JSON, the snapshot's device trace events); a failed run names `script`."""
    exp, snap = dlsim.tmp / f"{name}.yaml", dlsim.tmp / f"{name}.pickle"
    exp.write_text(json.dumps(experiment))
    r = subprocess.run([dlsim.binary, "run", str(exp), "--json", "--memory-snapshot", str(snap)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{script}: dlsim run {exp} failed ({r.returncode}): {r.stderr.strip()}")
    with open(snap, "rb") as f:
        return json.loads(r.stdout), pickle.load(f)["device_traces"][0]


def run_snapshot(dlsim, hw, tag):
    """dlsim's Inception-v3 b32 step on `hw` (memory_fidelity.py's experiment keys) -> (result JSON, openings)."""
    result, events = snapshot_run(dlsim, {"batch": 32, "hw": hw, "pool": "pytorch-caching", "swap": "none",
                                          "concurrency": "serial", "iterations": 3, "model": "inception_v3"},
                                  f"openings-{tag}", "memory_segment_openings")
    # cuDNN's scratch requests per step (dlsim names them NAME.workspace; the lazy first step is a step too)
    steps = result["iterations"] + (1 if result.get("first_step") == "lazy" else 0)
    ws = [e["size"] for e in events if e["action"] == "alloc" and e.get("frames")
          and e["frames"][0]["name"].endswith("workspace") and "cublas" not in e["frames"][0]["name"]]
    result["cudnn_requests_per_step"] = (len(ws) / steps, sum(ws) / steps)
    return result, openings(events)


def what_if_hw(dlsim, base):
    """`base`'s hardware file with Conv2d_2b's records replaced by the requests its probe records imply
    (conv_probe_replay.py: the older probe's allocated bytes replayed through the allocator's rules): forward
    265,605,632 B, data gradient the forward's (the records bound it to the forward's 254 MiB segment, at most 1 MiB
    left), weight gradient 273,799,315 B (the step's largest request), and no two-gradient entry (per-call entries,
    as conv_scratch_yaml.py writes a two-gradient call's requests); every other record as shipped (a conv_scratch
    list replaces the base's whole list, so the list is copied)."""
    text = (ROOT / "configs" / "hw" / f"{base}.yaml").read_text()
    records = {m.group(1): int(m.group(2)) for m in SHAPE.finditer(text)}
    if "fwd" not in records or "dgrad" not in records:
        raise SystemExit(f"memory_segment_openings: configs/hw/{base}.yaml: no fwd/dgrad conv_scratch record of "
                         "Inception-v3's Conv2d_2b at batch 32")
    asked = {"fwd": conv_probe_replay.ASKED_FWD, "dgrad": conv_probe_replay.ASKED_FWD,
             "wgrad": conv_probe_replay.ASKED_WGRAD}
    lines = text[text.index("conv_scratch:"):].splitlines()
    out = [f"base: {base}", "conv_scratch:"]
    for line in lines[1:]:
        if not line.lstrip().startswith("- {"):
            break
        m = SHAPE.search(line)
        if m and m.group(1) == "bwd":
            continue
        if m and m.group(1) in asked:
            line = line.replace(f"bytes: {m.group(2)}", f"bytes: {asked[m.group(1)]}")
        out.append(line)
    path = dlsim.tmp / f"{base}-what-if-requests.yaml"
    path.write_text("\n".join(out) + "\n")
    return str(path), records


def measured(path):
    """{reserved, large, small, large_bytes, max_ws} of the measured Inception-v3 b32 step; the counts are None where
    the file has only the peaks."""
    doc = json.loads((DATA / path).read_text())
    if "cases" not in doc:  # torch_step_profile.py's records: the peaks alone
        rec = next(r for r in doc["records"] if r["case"] == "inception_v3-b32")
        return {"reserved": rec["max_memory_reserved_bytes"], "large": None, "small": None, "large_bytes": None,
                "max_ws": None, "ws_per_step": ({}, 0), "openings": None}
    case = next(c for c in doc["cases"]
                if c.get("status") == "ok" and "inception_v3" in c["case"]["spec"] and c["case"]["batch"] == 32)
    m = case["measured"]
    small = m["segment.small_pool.peak"]
    return {"reserved": m["max_memory_reserved"], "large": m["segment.large_pool.peak"], "small": small,
            "large_bytes": m["max_memory_reserved"] - small * SMALL_SEGMENT,
            "max_ws": ((case.get("snapshot") or {}).get("workspaces") or {}).get("max_bytes"),
            "ws_per_step": ((case.get("snapshot") or {}).get("workspaces") or {}, doc["meta"]["measured_steps"]),
            # torch_memory_truth.py's openings ([segment, request, who]); measurements before it kept none
            "openings": (case.get("snapshot") or {}).get("segment_openings")}


def measured_layout(path):
    """(reserved, the large segments of BIG bytes or more, largest first, segment count) after the first warm-up step
    of a torch_memory_truth.py measurement that kept `warmup_steps`, and whether a later step opened any."""
    case = next(c for c in json.loads((DATA / path).read_text())["cases"] if c.get("status") == "ok")
    steps = case.get("warmup_steps")
    if not steps:
        raise SystemExit(f"memory_segment_openings: {DATA / path}: no warm-up steps with segments")
    first = [s for s, _, _ in steps[0]["segments"]]
    later = any(sorted(s for s, _, _ in w["segments"]) != sorted(first) for w in steps[1:])
    return sum(first), sorted((s for s in first if s >= BIG), reverse=True), len(first), later


def pools(o):
    """(large segments, their bytes, small segments) of a list of openings."""
    small = [s for s, _, _ in o if s == SMALL_SEGMENT]
    return len(o) - len(small), sum(s for s, _, _ in o) - sum(small), len(small)


def cell(v, fmt=str):
    return "—" if v is None else fmt(v)


def inception(dlsim):
    rows, big, notes, h200_openings = [], [], [], []
    for gpu, hw, path in CASES:
        t = measured(path)
        r, op = run_snapshot(dlsim, hw, hw)
        wi_hw, records = what_if_hw(dlsim, hw)
        w, wop = run_snapshot(dlsim, wi_hw, hw + "-what-if")
        rows.append(f"| {gpu}, measured | {mib(t['reserved'])} | {cell(t['large'])} | {cell(t['large_bytes'], mib)} "
                    f"| {cell(t['small'])} |")
        for label, res, o in (("dlsim as shipped", r, op), ("dlsim, what-if", w, wop)):
            n, b, s = pools(o)
            rows.append(f"| {gpu}, {label} | {mib(res['peak_reserved_bytes'])} "
                        f"({pct(res['peak_reserved_bytes'], t['reserved'])}) | {n} | {mib(b)} | {s} |")
        if gpu == "H200":
            h200_openings = op
            big = [f"| {mib(s)} | {q:,} | {name} |" for s, q, name in op if s >= BIG]
            if t["openings"]:
                big += ["", f"The measured step's, from `segment_openings` ({path}):", "",
                        "| segment | request, bytes | request |", "|---:|---:|---|"]
                big += [f"| {mib(s)} | {cell(q, lambda v: f'{v:,}')} | {name[:120]} |"
                        for s, q, name in t["openings"] if s >= BIG]
            notes.append(f"Conv2d_2b's records in `{hw}.yaml`: forward {records['fwd']:,} B, data gradient "
                         f"{records['dgrad']:,} B, weight gradient {records.get('wgrad', 0):,} B, both gradients "
                         f"{records.get('bwd', 0):,} B; the measured steps' largest cuDNN workspace request "
                         + (f"{t['max_ws']:,} B." if t["max_ws"] else "was not recorded."))
            ws, steps = t["ws_per_step"]
            n, b = r["cudnn_requests_per_step"]
            if ws.get("count"):
                notes.append(f"Per step, the measured cuDNN workspace requests (the snapshot's, over {steps} steps) "
                             f"number {ws['count'] / steps:,.0f} and sum {ws['total_bytes'] / steps / MIB:,.0f} MiB; "
                             f"dlsim's scratch requests {n:,.0f} and {b / MIB:,.0f} MiB.")
    res, big_real, n, later = measured_layout(LAYOUT)
    ours = sorted((s for s, _, _ in h200_openings if s >= BIG), reverse=True)
    notes.append(f"Session 12's H200 (`{LAYOUT}`): {n} segments, {mib(res)} MiB after the first warm-up step, "
                 f"{'and later steps opened more' if later else 'none opened after it'}; its segments of "
                 f"{mib(BIG)} MiB or more: {', '.join(mib(s) for s in big_real)} MiB; dlsim's (h200 as shipped): "
                 f"{', '.join(mib(s) for s in ours)} MiB.")
    return "\n".join([
        "MiB. Segments (cudaMalloc calls) per pool: measured from memory_stats (the small pool's are 2 MiB each); "
        "dlsim's from `dlsim run --memory-snapshot`. *what-if*: Conv2d_2b's records replaced by the requests the "
        "probe's allocated bytes imply (`conv_probe_replay.py`): forward 265,605,632 B, data gradient the forward's, "
        "weight gradient 273,799,315 B, per call (no two-gradient entry); nothing else changed.", "",
        "| case | reserved | large segments | large-pool bytes | small segments |",
        "|---|---:|---:|---:|---:|", *rows, "",
        f"dlsim's segments of {mib(BIG)} MiB or more on the H200, in the order opened (the request that opened each):",
        "", "| segment | request, bytes | request |", "|---:|---:|---|", *big, "", " ".join(notes)])
