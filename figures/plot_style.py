"""What every dlsim figure shares: one colour per policy name, axis labels with units, deterministic files.

Imported by figures/plot_runs.py and figures/plot_memory.py (never run on its own). The colour map is the only
place colours are chosen, so a policy has the same colour in every figure of every sweep.
"""
import sys
import zlib

from atomic_output import replaced_atomically
from script_main import InputError

try:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on CI machines
    import matplotlib.colors as mcolors
    import matplotlib.pyplot as plt
except ImportError as e:  # the C++ command relays this text
    sys.stderr.write(f"dlsim: matplotlib is missing for {sys.executable} ({e}); install Debian's python3-matplotlib "
                     "(scripts/install-deps.sh)\n")
    sys.exit(3)

# Same inputs, same bytes: SVG ids come from this salt, not a random one, and no file records the date.
matplotlib.rcParams["svg.hashsalt"] = "dlsim"
matplotlib.rcParams["svg.fonttype"] = "path"
matplotlib.rcParams["font.size"] = 10
matplotlib.rcParams["axes.titlesize"] = 11
matplotlib.rcParams["legend.fontsize"] = 9

# One colour per policy (pools, swap policies, concurrency policies) and per tensor kind. Names are the
# registries' (`dlsim list`); a label with parameters ("singa(limit_fraction=0.5)") takes its base name's colour.
POLICY_COLOURS = {
    # pools
    "cuda-malloc": "#7f7f7f",
    "cnmem": "#1f77b4",
    "pytorch-caching": "#ff7f0e",
    "tf-bfc": "#2ca02c",
    "smartpool": "#d62728",
    "planned": "#9467bd",
    # swap policies
    "none": "#a0a0a0",
    "vdnn": "#8c564b",
    "singa": "#e377c2",
    "save-on-cpu": "#bcbd22",
    "swapadvisor": "#17becf",
    "fastest-under-limit": "#393b79",
    "checkpoint": "#2ca02c",
    "sqrt": "#98df8a",
    "dtr": "#d62728",
    "capuchin": "#ff7f0e",
    "checkmate": "#9467bd",
    # concurrency policies
    "serial": "#6b6ecf",
    "critical-path": "#e6550d",
    "branch-streams": "#31a354",
    "dgrad-wgrad": "#843c39",
    "algorithm-aware": "#7b4173",
    "ios": "#3182bd",
    "optimizer-overlap": "#637939",
}

# Tensor kinds (workloads/graph.h TensorKind), for memory timelines.
KIND_COLOURS = {
    "weight": "#1f77b4",
    "gradient": "#ff7f0e",
    "optimizer_state": "#2ca02c",
    "activation": "#d62728",
    "workspace": "#9467bd",
    "input": "#8c564b",
    "other": "#7f7f7f",
}

# Names outside the map (models, hardware) get a colour from this list picked by a hash of the name: stable
# across runs and figures, unlike matplotlib's colour cycle, which depends on the order series are drawn.
_FALLBACK = ["#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#3182bd", "#e6550d", "#31a354", "#756bb1",
             "#636363", "#6baed6", "#fd8d3c", "#74c476", "#9e9ac8", "#969696", "#9c9ede", "#cedb9c", "#e7ba52",
             "#e7969c", "#de9ed6"]


def base_name(label):
    return str(label).split("(", 1)[0].strip()


def colour_for(label):
    b = base_name(label)
    if b in POLICY_COLOURS:
        return POLICY_COLOURS[b]
    return _FALLBACK[zlib.crc32(b.encode()) % len(_FALLBACK)]


def colours_for(labels):
    """label -> colour for the series of one figure. Labels that share a base name (the same policy with several
    parameter values) get shades of its colour, darkest first in the order given, so they stay apart."""
    groups = {}
    for label in labels:
        groups.setdefault(base_name(label), []).append(label)
    out = {}
    for members in groups.values():
        base = mcolors.to_rgb(colour_for(members[0]))
        n = len(members)
        for i, label in enumerate(members):
            if n == 1:
                out[label] = mcolors.to_hex(base)
                continue
            t = i / (n - 1)  # 0: the base colour darkened, 1: lightened
            mix = 0.6 * t - 0.3
            target = (1.0, 1.0, 1.0) if mix > 0 else (0.0, 0.0, 0.0)
            a = abs(mix)
            out[label] = mcolors.to_hex(tuple(c + (tc - c) * a for c, tc in zip(base, target)))
    return out


# Column -> (label, scale to apply, unit). Bytes are drawn in MiB, microseconds in ms, ratios in %.
def column_axis(col):
    names = {
        "iteration_time_us": "iteration time",
        "peak_live_bytes": "peak live memory",
        "peak_reserved_bytes": "peak reserved memory",
        "fragmentation": "fragmentation: reserved / live - 1",
        "device_mallocs": "cudaMalloc calls",
        "device_frees": "cudaFree calls",
        "alloc_time_us": "allocator time per iteration",
        "no_swap_iteration_time_us": "iteration time without swapping",
        "no_swap_peak_live_bytes": "peak live memory without swapping",
        "overhead": "swap overhead",
        "swap_target_bytes": "swap target",
        "swap_out_bytes": "bytes swapped out",
        "swap_in_bytes": "bytes swapped in",
        "copy_d2h_busy": "D2H copy engine busy",
        "copy_h2d_busy": "H2D copy engine busy",
        "swap_lower_bound_us": "lower bound on iteration time",
        "swap_planned_peak_bytes": "planned peak memory",
        "ideal_iteration_us": "ideal iteration time",
        "batch": "batch size",
    }
    label = names.get(col, col.replace("_", " "))
    if col.endswith("_bytes"):
        return label, 1.0 / (1 << 20), "MiB"
    if col.endswith("_us"):
        return label, 1.0 / 1000.0, "ms"
    if col in ("fragmentation", "overhead", "copy_d2h_busy", "copy_h2d_busy"):
        return label, 100.0, "%"
    return label, 1.0, ""


def axis_text(col):
    label, _, unit = column_axis(col)
    return f"{label} ({unit})" if unit else label


def check_outputs(outs):
    """InputError unless every figure's name ends in .png or .svg (the format is taken from it)."""
    for out in outs:
        if not (out.endswith(".png") or out.endswith(".svg")):
            raise InputError(f"{out}: the figure's name must end in .png or .svg")


def save(fig, outs):
    """Writes the figure to each path (format from the extension: .png or .svg) without dates or versions, each
    whole or not at all (atomic_output.py): a failed save leaves no half-written figure."""
    check_outputs(outs)
    for out in outs:
        with replaced_atomically(out) as f:
            if out.endswith(".svg"):
                fig.savefig(f, format="svg", metadata={"Date": None, "Creator": "dlsim"}, bbox_inches="tight")
            else:
                fig.savefig(f, format="png", dpi=150, metadata={"Software": "dlsim"}, bbox_inches="tight")
    plt.close(fig)
