#!/usr/bin/env bash
# Refits the per-class efficiencies of the hardware files to the published points (data/published/) and writes
# the tables of results/published.md into results/published/ (no GPU needed; after scripts/build.sh):
#   points.md, points.json    every point: published, dlsim before issue 9, before the fit, after, model left out
#   variants.md               leave-one-model-out error of the fit's model variants (the choice of the shipped one)
# With --write-hw it also writes the [F] blocks into configs/hw/ (the V100 and A100 files from their points, the
# H100 and H200 files from the A100's and V100's values) and regenerates what depends on the H100 datasheet file:
# configs/hw/h100-sxm.yaml (scripts/calibrate_h100.sh) and results/validation/h100-sxm/tables/.
set -euo pipefail
cd "$(dirname "$0")/.."
write=()
[[ ${1:-} == --write-hw ]] && write=(--write-hw)
out=results/published
mkdir -p "$out"
data=(data/published/deeplearningexamples.yaml data/published/held-out.yaml)
transfer=(--transfer-to h100-sxm-datasheet,h200 --transfer-from a100,v100)
build/bin/dlsim calibrate --published "${data[@]}" "${transfer[@]}" "${write[@]}" --report "$out/points.md" \
  --json "$out/points.json"
{
  echo "| variant | V100 in sample | V100 left out | A100 in sample | A100 left out | H100 held out (PyTorch, h100-sxm-datasheet) |"
  echo "|---|---|---|---|---|---|"
  for v in "shipped:" "tie-gemm:--tie-gemm" "occupancy-scaling:--occupancy-scaling" "split-memory:--split-memory"; do
    name=${v%%:*}
    flag=${v#*:}
    tmp=$(mktemp)
    # shellcheck disable=SC2086
    build/bin/dlsim calibrate --published "${data[@]}" "${transfer[@]}" --fit-model-only $flag --json "$tmp" > /dev/null
    python3 - "$name" "$tmp" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
s = json.load(open(path))["summary"]
f = lambda g, k: f"{s[g][k]:.1f} %"
print(f"| {name} | {f('v100','mape_after')} | {f('v100','mape_left_out')} | {f('a100','mape_after')} | "
      f"{f('a100','mape_left_out')} | {f('test:h100-sxm-datasheet','mape_after')} |")
PY
    rm -f "$tmp"
  done
} > "$out/variants.md"
if [[ ${#write[@]} -gt 0 ]]; then
  scripts/calibrate_h100.sh
  scripts/validation_tables.sh
fi
echo "tables written to $out/"
