#!/usr/bin/env bash
# Installs what dlsim needs, builds it, and runs the default sweep on the simulator (no GPU needed): pools, swap and
# recompute, and concurrency policies on two models, each against PyTorch's defaults (configs/sweeps/default.yaml).
# Writes results/default/runs.csv, summary.md and five figures (PNG and SVG), and prints the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/bin/dlsim sweep configs/sweeps/default.yaml
cat results/default/summary.md
