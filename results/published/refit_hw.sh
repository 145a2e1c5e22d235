#!/usr/bin/env bash
# Refits the per-class efficiencies of the hardware files to the published points (data/published/) and writes them
# into configs/hw/: the [F] blocks of the V100 and A100 files from their points, of the H100 datasheet and H200 files
# from the A100's and V100's values; then what depends on the H100 datasheet file: configs/hw/h100-sxm.yaml
# (results/validation/calibrate_h100.sh) and results/validation/h100-sxm/tables/ (results/validation/tables.sh).
# A change of its own: every study simulates with these files, so regenerate them all afterwards
# (scripts/regenerate.py --all). Without a GPU; after scripts/build.sh.   Usage: results/published/refit_hw.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
build/bin/dlsim calibrate --published data/published/deeplearningexamples.yaml data/published/held-out.yaml \
  --transfer-to h100-sxm-datasheet,h200-datasheet --transfer-from a100,v100 --write-hw
results/validation/calibrate_h100.sh
results/validation/tables.sh
scripts/regenerate.py published
echo "hardware files refitted: regenerate every study (scripts/regenerate.py --all)"
