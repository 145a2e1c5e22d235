#!/usr/bin/env bash
# The figures of results/pools.md, drawn by `dlsim plot` from the pools sweeps' runs.csv into results/pools-figures/
# (PNG and SVG; the same rows give the same files).   scripts/pools_figures.sh [path/to/dlsim]
set -euo pipefail
cd "$(dirname "$0")/.."
dlsim=${1:-build/bin/dlsim}
out=results/pools-figures
mkdir -p "$out"
for set in cifar imagenet; do
  "$dlsim" plot "results/pools-$set/runs.csv" --kind bars --x model --y peak_reserved_bytes --hue pool \
    --bound peak_live_bytes --log-y \
    --title "Peak reserved memory per pool, $set models (black: peak live, the lower bound)" \
    --out "$out/$set-peak-reserved.png" --out "$out/$set-peak-reserved.svg"
done
"$dlsim" plot results/pools-imagenet/runs.csv --kind bars --x model --y fragmentation --hue pool \
  --title "Memory a pool reserves beyond the lower bound, ImageNet models (peak reserved / peak live - 1)" \
  --out "$out/imagenet-excess.png" --out "$out/imagenet-excess.svg"
# What the lower bound is made of: ResNet-50's live bytes over three iterations, by tensor kind.
"$dlsim" plot-memory configs/experiments/resnet50-cuda-malloc.yaml \
  --out "$out/resnet50-memory-timeline.png" --out "$out/resnet50-memory-timeline.svg"
