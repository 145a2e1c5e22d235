#!/usr/bin/env python3
"""The H200 kernel model with every depthwise sweep record against the shipped one: cuda-graph step times of the
models whose depthwise convolutions it prices, against their measured CUDA-graph replays.

Fits the H200's kernel model as validate/torch/ship_hw_files.py does (its sweeps and traces, every record kept) into
build/depthwise-split/h200-fitted.yaml, not configs/hw; writes h200.yaml there (the shipped configs/hw/h200.yaml
over that file instead of configs/hw/h200-fitted.yaml); and prints, per model, `dlsim run`'s cuda-graph iteration
on the shipped file and on the refit beside each H200 machine's measured replay (graph_replay_ms_median). Used for
results/fidelity/kernels.md ("The depthwise split"); the files it writes are not shipped.
"""
import argparse
import os
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import fit_host_model as host  # noqa: E402
import ship_hw_files as ship  # noqa: E402

WORK = "build/depthwise-split"
# The CNNs with depthwise convolutions: ConvNeXt-T's run in cuDNN (channels_last through its permutes), the others'
# in PyTorch's own kernels (fp32 NCHW), whose classes the split must leave alone.
MODELS = ["convnext_tiny-b32", "mobilenet_v3_large-b64", "efficientnet_b0-b32", "mobilenet_v2-b64",
          "shufflenet_v2_x1_0-b64"]
REPLAYS = ["h200-2026-11-27b/step-profiles.json", "h200-2026-11-28b/step-profiles.json",
           "h200-2026-11-28c/step-profiles.json", "h200-2026-11-28c/step-profiles-eleven.json"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dlsim", default=str(ROOT / "build" / "bin" / "dlsim"))
    a = ap.parse_args()
    if not os.access(a.dlsim, os.X_OK):
        print(f"depthwise_split_check: {a.dlsim}: no dlsim binary (scripts/build.sh, or --dlsim PATH)", file=sys.stderr)
        return 2
    work = ROOT / WORK
    work.mkdir(parents=True, exist_ok=True)
    dlsim = host.Dlsim(os.path.abspath(a.dlsim), work)
    label, datasheet, fitted, _, _ = ship.MACHINES[0]
    ship.fit_kernels(dlsim, label, datasheet, fitted, out=f"{WORK}/{fitted}.yaml")
    shipped = (ROOT / "configs" / "hw" / "h200.yaml").read_text()
    refit = work / "h200.yaml"
    refit.write_text(re.sub(r"(?m)^base: h200-fitted$", f"base: {fitted}.yaml", shipped, count=1))
    replays = {}
    for f in REPLAYS:
        for case, p in host.load_profiles(host.DATA / f).items():
            replays.setdefault(case, []).append((f.split("/")[0].removeprefix("h200-"), p["graph_replay_ms_median"]))
    print("| model | replays (ms) | shipped h200.yaml | refit | refit vs each replay |")
    print("|---|---|---:|---:|---|")
    for case in MODELS:
        model, batch = host.CASES[case]
        before = dlsim.run(model, batch, ROOT / "configs" / "hw" / "h200.yaml", launch="cuda-graph", trace=False)[0]
        after = dlsim.run(model, batch, refit, launch="cuda-graph", trace=False)[0]
        b, f = before["iteration_time_us"] / 1000.0, after["iteration_time_us"] / 1000.0
        meas = replays[case]
        print(f"| {case} | {', '.join(f'{m:.2f} ({w})' for w, m in meas)} | {b:.2f} "
              f"({', '.join(f'{100 * (b / m - 1):+.1f} %' for _, m in meas)}) | {f:.2f} | "
              f"{', '.join(f'{100 * (f / m - 1):+.1f} %' for _, m in meas)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
