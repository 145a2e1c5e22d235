#!/usr/bin/python3
"""Draws a run's memory over time from a PyTorch-format memory snapshot (what `dlsim plot-memory` runs).

  plot_memory.py SNAPSHOT.pickle --out FIG.png [--out FIG.svg] [--title TEXT]

Replays the snapshot's device trace: live bytes rise at each alloc and fall at its free_requested (as dlsim
counts them; a free_completed with no request before it counts too), stacked by tensor kind (the first frame's
filename in dlsim's snapshots; "other" for anything else, e.g. PyTorch's own snapshots), and the reserved bytes
rise and fall with segment_alloc/segment_map and segment_free/segment_unmap. The peaks of both are marked and
printed. Time is the entries' time_us, or their index when the trace has no times.
Exit status: 0 drawn, 2 bad input, 3 matplotlib missing.
"""
import argparse
import numbers
import sys

import plot_style
from plot_style import plt
from script_main import InputError, run_main
from snapshot_pickle import load_snapshot_pickle

KINDS = ["weight", "optimizer_state", "gradient", "activation", "workspace", "input", "other"]
MIB = float(1 << 20)


def load(path):
    """The snapshot and its first non-empty device trace, each entry checked to be what replay() reads."""
    snap = load_snapshot_pickle(path)  # refuses any pickle that would run code (snapshot_pickle.py)
    if not isinstance(snap, dict) or not isinstance(snap.get("device_traces"), list):
        raise InputError(f"{path}: not a memory snapshot with a trace (expected a dict with 'device_traces', a list "
                         "of traces; PyTorch records one after torch.cuda.memory._record_memory_history())")
    traces = [(d, t) for d, t in enumerate(snap["device_traces"]) if t]
    if not traces:
        raise InputError(f"{path}: the snapshot's device_traces are empty")
    device, trace = traces[0]
    if not isinstance(trace, list):
        raise InputError(f"{path}: device_traces[{device}] is a {type(trace).__name__}, not a list of entries")
    for i, e in enumerate(trace):
        where = f"{path}: device_traces[{device}][{i}]"
        if not isinstance(e, dict):
            raise InputError(f"{where} is a {type(e).__name__}, not an entry (a dict with 'action', 'size', ...)")
        for key in ("size", "time_us"):
            v = e.get(key, 0)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or v != v or abs(v) == float("inf"):
                raise InputError(f"{where}: '{key}' is {v!r}, not a number")
        addr = e.get("addr")
        if addr is not None and (isinstance(addr, bool) or not isinstance(addr, numbers.Integral)):
            raise InputError(f"{where}: 'addr' is {addr!r}, not an address")
        frames = e.get("frames")
        if frames is not None and not (isinstance(frames, list) and all(isinstance(f, dict) for f in frames)):
            raise InputError(f"{where}: 'frames' is not a list of dicts")
    return snap, trace


def kind_of(entry):
    frames = entry.get("frames") or []
    k = frames[0].get("filename", "") if frames else ""
    return k if k in KINDS else "other"


def replay(trace):
    """Per entry: time, live bytes per kind, reserved bytes."""
    live = {k: 0 for k in KINDS}
    reserved = 0
    requested = set()
    times, rows, res = [], [], []
    timed = all("time_us" in e for e in trace)
    for i, e in enumerate(trace):
        a, size = e.get("action"), int(e.get("size", 0))  # load() checked that it is a number
        if a == "alloc":
            live[kind_of(e)] += size
        elif a == "free_requested":
            live[kind_of(e)] -= size
            requested.add(e.get("addr"))
        elif a == "free_completed":
            if e.get("addr") in requested:
                requested.discard(e.get("addr"))
            else:
                live[kind_of(e)] -= size
        elif a in ("segment_alloc", "segment_map"):
            reserved += size
        elif a in ("segment_free", "segment_unmap"):
            reserved -= size
        else:
            continue
        times.append(e["time_us"] / 1000.0 if timed else i)
        rows.append(dict(live))
        res.append(reserved)
    return times, rows, res, timed


def main(argv):
    p = argparse.ArgumentParser(prog="dlsim plot-memory", description=__doc__.split("\n\n")[0])
    p.add_argument("snapshot")
    p.add_argument("--out", action="append", required=True)
    p.add_argument("--title")
    a = p.parse_args(argv)
    plot_style.check_outputs(a.out)  # before any work: a figure that could not be saved is no figure
    _, trace = load(a.snapshot)
    times, rows, reserved, timed = replay(trace)
    if not times:
        raise InputError(f"{a.snapshot}: the trace has no alloc, free or segment entries")
    kinds = [k for k in KINDS if any(r[k] for r in rows)]
    totals = [sum(r.values()) for r in rows]
    peak_live_i = max(range(len(totals)), key=lambda i: (totals[i], -i))
    peak_res_i = max(range(len(reserved)), key=lambda i: (reserved[i], -i))

    peak_live, peak_res = totals[peak_live_i] / MIB, reserved[peak_res_i] / MIB
    # A pool that reserves far more than is live (cnmem's fixed share of the GPU) would flatten the live curve:
    # a second panel then shows the live bytes on their own scale.
    zoom = peak_res > 3 * peak_live > 0
    fig, axes = plt.subplots(2 if zoom else 1, 1, figsize=(9, 7.5 if zoom else 4.8), sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [1, 2] if zoom else [1]})
    for i, ax in enumerate(axes[:, 0]):
        ax.stackplot(times, [[r[k] / MIB for r in rows] for k in kinds], step="post",
                     colors=[plot_style.KIND_COLOURS[k] for k in kinds],
                     labels=[k.replace("_", " ") for k in kinds], alpha=0.85, linewidth=0,
                     rasterized=True)  # thousands of steps per kind: an image inside the SVG, not megabytes of paths
        if any(reserved) and (i == 0 or not zoom):
            ax.step(times, [r / MIB for r in reserved], where="post", color="black", linewidth=1.2,
                    label="reserved by the pool")
            ax.plot([times[peak_res_i]], [peak_res], marker="v", color="black", linestyle="none", markersize=8,
                    label=f"peak reserved: {peak_res:.1f} MiB")
        if i == len(axes) - 1:
            ax.plot([times[peak_live_i]], [peak_live], marker="o", color="#a01010", linestyle="none", markersize=7,
                    label=f"peak live: {peak_live:.1f} MiB at {times[peak_live_i]:.3f} {'ms' if timed else ''}")
        ax.set_ylabel("memory (MiB)" if not zoom else ("all memory (MiB)" if i == 0 else "live memory (MiB)"))
        ax.set_ylim(0, (peak_live * 1.12) if (zoom and i == 1) else None)
        ax.set_xlim(times[0], times[-1] + 0.01 * (times[-1] - times[0]))  # room for a peak at the very end
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
    ax = axes[-1, 0]
    ax.set_xlabel("simulated time of the host's alloc and free calls (ms)" if timed else "trace entry")
    handles, labels = [], []
    for a_ in axes[:, 0]:
        for h, l in zip(*a_.get_legend_handles_labels()):
            if l not in labels:
                handles.append(h)
                labels.append(l)
    fig.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.0, 0.95), title="live bytes by kind")
    fig.suptitle(a.title or f"memory over time: {a.snapshot}")
    fig.tight_layout()
    plot_style.save(fig, a.out)
    print(f"peak live {totals[peak_live_i]} bytes at {times[peak_live_i]:.3f} {'ms' if timed else 'entries'}; "
          f"peak reserved {reserved[peak_res_i]} bytes")
    return 0


if __name__ == "__main__":
    run_main("dlsim plot-memory", main, sys.argv[1:])
