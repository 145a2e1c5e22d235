#!/usr/bin/env bash
# Installs what dlsim needs, builds it, and runs the default sweep on the simulator (no GPU needed):
# results/default/runs.csv and results/default/summary.md.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
build/bin/dlsim sweep configs/sweeps/default.yaml
cat results/default/summary.md
