"""A refit of dlsim's two concurrent_kernels constants (gemm_blocks_per_sm, co_run_slowdown) on whole-step
CUDA-graph speed-ups measured with PyTorch, with a leave-one-model-out (LOMO) error; concurrency_fidelity.py --gpu
h100 runs the grid and writes the tables. A finding, not written into any hardware file: the shipped constants
were fitted by `dlsim calibrate` to concurrent-convolution micro-benchmarks, and committed studies depend on them.

The search is `dlsim calibrate`'s (validate/calibrate/concurrency_regression.cc): the grid point with the least
sum of squared log speed-up errors, ties kept at the smaller values (gemm_blocks_per_sm first, then
co_run_slowdown); here over 1-4 blocks per SM and co_run_slowdown 0 to 2 in steps of 0.05 (calibrate steps 0.001;
coarser because each point is a whole training step per case and GPU, not a closed-form pair of kernels).
"""
import math

PER_SM = (1, 2, 3, 4)
SLOWDOWNS = tuple(round(0.05 * i, 2) for i in range(41))
GRID = tuple((p, s) for p in PER_SM for s in SLOWDOWNS)


def overlay(base, per_sm, slowdown):
    """A hardware file: `base` with the two constants replaced (its other concurrent_kernels keys kept)."""
    return f"base: {base}\nconcurrent_kernels:\n  gemm_blocks_per_sm: {per_sm}\n  co_run_slowdown: {slowdown}\n"


def fit(simulated, measured, keys, per_sm=None):
    """(grid point, RMS log error) of the point fitting `keys` best. simulated: {key: {point: speed-up}};
    measured: {key: speed-up}; per_sm: hold gemm_blocks_per_sm at this value. Points are tried in sorted order,
    and only a strictly smaller error replaces the best, so ties keep the smaller values."""
    if not keys:
        raise ValueError("fit: no cases to fit")
    best, best_error = None, math.inf
    for point in sorted(p for p in simulated[keys[0]] if per_sm is None or p[0] == per_sm):
        error = sum(math.log(simulated[k][point] / measured[k]) ** 2 for k in keys)
        if error < best_error - 1e-12:
            best, best_error = point, error
    return best, math.sqrt(best_error / len(keys))


def lomo(simulated, measured, model_of, per_sm=None):
    """{key: (point fitted without key's model, simulated speed-up there)}: each model's cases (every batch, every
    GPU) left out together, fitted on the rest and predicted."""
    keys = sorted(measured)
    out = {}
    for model in sorted({model_of(k) for k in keys}):
        rest = [k for k in keys if model_of(k) != model]
        point, _ = fit(simulated, measured, rest, per_sm)
        for k in keys:
            if model_of(k) == model:
                out[k] = (point, simulated[k][point])
    return out


def rms(errors):
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def report_rows(simulated, measured, shipped, defaults, model_of, label_of, held_per_sm):
    """The markdown table and its summary lines. shipped/defaults: {key: speed-up} of the hardware file as
    shipped and of the [A] defaults; held_per_sm: the shipped gemm_blocks_per_sm, held for a refit of
    co_run_slowdown alone."""
    keys = sorted(measured)
    all_point, all_rms = fit(simulated, measured, keys)
    left_out = lomo(simulated, measured, model_of)
    held_point, held_rms = fit(simulated, measured, keys, held_per_sm)
    held_out = lomo(simulated, measured, model_of, held_per_sm)
    lines = ["| GPU | model | batch | measured speed-up | shipped constants | defaults | alone best fit (blocks/SM, "
             "slowdown) | fit on all (error) | LOMO fit (blocks/SM, slowdown) | LOMO prediction | LOMO error | "
             f"LOMO, blocks/SM held at {held_per_sm}: slowdown | its error |",
             "|---|---|---:|---:|---:|---:|---|---:|---|---:|---:|---:|---:|"]
    err = {"shipped": [], "defaults": [], "all": [], "lomo": [], "held": []}
    for k in keys:
        m = measured[k]
        alone, _ = fit(simulated, measured, [k])
        (lp, ls), lsim = left_out[k]
        (_, hs), hsim = held_out[k]
        for name, value in (("shipped", shipped[k]), ("defaults", defaults[k]), ("all", simulated[k][all_point]),
                            ("lomo", lsim), ("held", hsim)):
            err[name].append(value / m - 1)
        lines.append(f"| {label_of(k)} | {m:.3f}× | {shipped[k]:.3f}× ({100 * (shipped[k] / m - 1):+.1f} %) | "
                     f"{defaults[k]:.3f}× ({100 * (defaults[k] / m - 1):+.1f} %) | {alone[0]}, {alone[1]:.2f} | "
                     f"{simulated[k][all_point]:.3f}× ({100 * (simulated[k][all_point] / m - 1):+.1f} %) | "
                     f"{lp}, {ls:.2f} | {lsim:.3f}× | {100 * (lsim / m - 1):+.1f} % | {hs:.2f} | "
                     f"{100 * (hsim / m - 1):+.1f} % |")
    lines += ["", f"Fit on all {len(keys)} cases: `gemm_blocks_per_sm: {all_point[0]}`, "
              f"`co_run_slowdown: {all_point[1]:.2f}` (RMS log error {100 * all_rms:.1f} %). RMS speed-up error: "
              f"shipped constants {100 * rms(err['shipped']):.1f} %, defaults {100 * rms(err['defaults']):.1f} %, "
              f"fit on all {100 * rms(err['all']):.1f} %, leave-one-model-out {100 * rms(err['lomo']):.1f} % "
              f"(mean {100 * sum(err['lomo']) / len(keys):+.1f} %). With `gemm_blocks_per_sm` held at {held_per_sm}: "
              f"`co_run_slowdown: {held_point[1]:.2f}` fits all (RMS log error {100 * held_rms:.1f} %), "
              f"leave-one-model-out {100 * rms(err['held']):.1f} % (mean {100 * sum(err['held']) / len(keys):+.1f} %)."]
    return lines
