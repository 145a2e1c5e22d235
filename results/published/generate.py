"""The fit of the hardware files' per-class efficiencies to the published points (data/published/), without writing
the hardware files: points.md and points.json (every point: published, dlsim before issue 9, before the fit, after,
model left out; the error per GPU; the fitted efficiencies), variants.md (the leave-one-model-out error of the fit's
model variants), and those tables in README.md. refit_hw.sh writes the fit into configs/hw/ instead."""
import functools
import json
import os
import tempfile

DATA = ["data/published/deeplearningexamples.yaml", "data/published/held-out.yaml"]
TRANSFER = ["--transfer-to", "h100-sxm-datasheet,h200-datasheet", "--transfer-from", "a100,v100"]
VARIANTS = [("shipped", []), ("tie-gemm", ["--tie-gemm"]), ("occupancy-scaling", ["--occupancy-scaling"]),
            ("split-memory", ["--split-memory"])]


def variant(dlsim, flags):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "fit.json")
        dlsim.run(["calibrate", "--published", *DATA, *TRANSFER, "--fit-model-only", *flags, "--json", out])
        with open(out) as f:
            return json.load(f)["summary"]


def variants_table(summaries):
    out = ["| variant | V100 in sample | V100 left out | A100 in sample | A100 left out | H100 held out (PyTorch, "
           "h100-sxm-datasheet) |", "|---|---|---|---|---|---|"]
    for (name, _), s in zip(VARIANTS, summaries):
        f = lambda g, k: f"{s[g][k]:.1f} %"  # noqa: E731
        out.append(f"| {name} | {f('v100', 'mape_after')} | {f('v100', 'mape_left_out')} | {f('a100', 'mape_after')} "
                   f"| {f('a100', 'mape_left_out')} | {f('test:h100-sxm-datasheet', 'mape_after')} |")
    return "\n".join(out)


def generate(study):
    dl = study.dlsim
    dl.run(["calibrate", "--published", *DATA, *TRANSFER, "--report", study.path("points.md"),
            "--json", study.path("points.json")])
    table = variants_table(dl.parallel([functools.partial(variant, dl, flags) for _, flags in VARIANTS]))
    study.write("variants.md", table + "\n")
    points, error, efficiencies = study.path("points.md").read_text().strip("\n").split("\n\n")
    study.block("every-point", points)
    study.block("error", error)
    study.block("variants", table)
