#!/usr/bin/env bash
# Prepares the validation matrix (configs/validation/*.yaml) for a GPU machine: for each experiment,
# `dlsim validate` writes DIR/plan.json and DIR/trace.sim.json (without a GPU it then stops with exit 3).
# Copies dlsim-cuda beside them, so that the folder can be carried to the GPU machine as it is.
#   scripts/prepare_validation.sh [OUT_DIR]   (default: gpu-run/, ignored by git)
# CONFIGS=GLOB picks other experiments (e.g. 'configs/validation/swap/*.yaml'; default configs/validation/*.yaml).
# HW=FILE replaces the experiments' hardware file (e.g. a calibrated one, whose measured cuDNN workspaces size
# the plans' workspace tensors). LEAN=1 keeps only plan.json.gz per experiment (what the GPU machine needs; the
# plans compress about tenfold, so several sets fit the device tool's 64 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-run}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for exp in ${CONFIGS:-configs/validation/*.yaml}; do
  name=$(basename "$exp" .yaml)
  if [[ -n ${HW:-} ]]; then
    grep -v '^hw:' "$exp" > "$tmp/$name.yaml"
    echo "hw: $(realpath "$HW")" >> "$tmp/$name.yaml"
    exp=$tmp/$name.yaml
  fi
  rc=0
  build/bin/dlsim validate "$exp" --out "$out/$name" --warmup 2 --iterations 5 2>/dev/null || rc=$?
  [[ $rc == 0 || $rc == 3 ]] || { echo "dlsim validate $exp failed ($rc)"; exit 1; }
  [[ -f $out/$name/plan.json ]] || { echo "no plan for $exp"; exit 1; }
  if [[ ${LEAN:-0} == 1 ]]; then
    gzip -9f "$out/$name/plan.json"
    rm -f "$out/$name/trace.sim.json"
  fi
done
cp build/bin/dlsim-cuda "$out/" 2>/dev/null || echo "note: build/bin/dlsim-cuda not built (CUDA off?)"
# The GPU machine's image has CUDA, cuDNN and cuBLAS but not Debian's yaml-cpp, ONNX and protobuf (the ONNX
# importer comes in with the workloads library): carry those libraries beside it, and the binary without its
# debugging symbols (a third of its size; the device tool carries at most 64 MiB).
if [[ -f $out/dlsim-cuda ]]; then
  strip "$out/dlsim-cuda"
  mkdir -p "$out/lib"
  ldd "$out/dlsim-cuda" | awk '/yaml-cpp|onnx|protobuf/ {print $3}' | xargs -r -I{} cp -L {} "$out/lib/"
fi
echo "prepared $(ls -d "$out"/*/ | wc -l) experiments in $out/"
