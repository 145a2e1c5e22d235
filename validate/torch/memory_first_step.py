"""PyTorch's first training step against the steady state, in dlsim's reserved memory, for memory_fidelity.py's
report: every case with a memory measurement run twice, `first_step: preallocated` (the optimizer's state and the
cuBLAS workspaces allocated with the weights before the first iteration: every iteration the steady state, as dlsim
ran before) and `first_step: lazy` (allocated where PyTorch's first step makes them: torch.optim's state in the
first optimizer.step(), each thread's cuBLAS workspaces at its first matrix product; experiment/first_step.h), and
what the lazy first step alone had reserved (`first_step_peak_reserved_bytes`; a lazy run's first step comes before
the iterations it is asked for). torch.cuda.max_memory_reserved is over the whole process, and the
caching allocator gives nothing back: the measured reserved bytes are the first steps' layout as much as the steady
one's (every measured case opened all its segments in its warm-up steps: num_device_alloc after the 3 warm-ups equals
that after the 2 measured steps).
"""
from fit_host_model import pct  # memory_fidelity.py puts validate/torch/ on the path before importing this
from memory_h100 import mib

MODES = ("preallocated", "lazy")


def runs(dlsim, keys, batch, hw):
    """{mode: result} for both modes (a lazy run's first step comes before its 3 iterations, and its
    first_step_peak_* figures are that step's own)."""
    return {m: dlsim.run(dict(keys, first_step=m), batch, hw) for m in MODES}


def table(dlsim, cases, failed_first_step=None):
    """cases: (label, measured reserved, measured cudaMalloc calls, zoo keys or None, trace path, batch, hw).
    failed_first_step: (label, measured dict, zoo keys, trace path, batch, hw) of a run that stopped in its first
    step, whose peaks are that step's."""
    rows, errs = [], {(k, m): [] for k in ("zoo", "traced") for m in MODES}
    for label, res, segs, keys, trace, batch, hw in cases:
        cells = [label, mib(res), str(segs)]
        seg_cells = []
        for kind, k in (("zoo", keys), ("traced", {"model": str(trace)})):
            if k is None:
                cells += ["—", "—", "—"]
                seg_cells.append("—")
                continue
            r = runs(dlsim, k, batch, hw)
            for m in MODES:
                errs[(kind, m)].append(r[m]["peak_reserved_bytes"] / res - 1)
                cells.append(f"{mib(r[m]['peak_reserved_bytes'])} ({pct(r[m]['peak_reserved_bytes'], res)})")
            cells.append(f"{mib(r['lazy']['first_step_peak_reserved_bytes'])}")
            seg_cells.append(f"{r['preallocated']['device_mallocs']} → {r['lazy']['device_mallocs']}")
        rows.append("| " + " | ".join(cells + seg_cells) + " |")

    def mae(e):
        return f"{100.0 * sum(abs(x) for x in e) / len(e):.1f} %" if e else "—"
    out = ["MiB. Reserved: dlsim's peak over 3 iterations with the first step preallocated (before), and over the "
           "lazy first step (now the default on pytorch-caching) and 3 iterations after it, its error against the "
           "measurement in brackets; *1st*: what the lazy first step had reserved when it ended "
           "(`first_step_peak_reserved_bytes`). Segments: cudaMalloc calls, measured, and dlsim preallocated → lazy.", "",
           "| case | measured reserved | measured segments | zoo, preallocated | zoo, lazy | zoo, lazy 1st | "
           "traced, preallocated | traced, lazy | traced, lazy 1st | zoo segments | traced segments |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"] + rows
    out += ["", f"Mean absolute error of reserved over the {len(cases)} cases: zoo {mae(errs[('zoo', 'preallocated')])} "
                f"-> {mae(errs[('zoo', 'lazy')])}, traced {mae(errs[('traced', 'preallocated')])} -> "
                f"{mae(errs[('traced', 'lazy')])} (preallocated -> lazy)."]
    if failed_first_step:
        label, m, keys, trace, batch, hw = failed_first_step
        z = dlsim.run(dict(keys, first_step="lazy"), batch, hw)
        t = dlsim.run({"model": str(trace), "first_step": "lazy"}, batch, hw)
        zp = dlsim.run(dict(keys, first_step="preallocated", iterations=1), batch, hw)
        out += ["", f"{label}: the run that failed inside autograd reached {mib(m['max_memory_reserved'])} MiB "
                    f"reserved, {mib(m['max_memory_allocated'])} MiB allocated, in {m['num_device_alloc']} segments. "
                    f"dlsim's lazy first step: zoo {mib(z['first_step_peak_reserved_bytes'])} MiB reserved, "
                    f"{mib(z['first_step_peak_live_bytes'])} MiB live; traced "
                    f"{mib(t['first_step_peak_reserved_bytes'])}, {mib(t['first_step_peak_live_bytes'])}; the "
                    f"preallocated first iteration (the zoo's) holds {mib(zp['peak_live_bytes'])} MiB live at its peak."]
    return "\n".join(out)
