#!/usr/bin/env bash
# How much faster `dlsim sweep --jobs 2` runs a 1,000-point sweep than `--jobs 1` (issue 14's goal: at least
# 1.8x on a 2-core machine), and whether both give the same runs.csv and summary.md byte for byte.
# Usage: scripts/sweep_speedup.sh [SWEEP.yaml] [JOBS]   (defaults: configs/sweeps/speedup-1000.yaml, 2)
# Needs build/bin/dlsim (scripts/build.sh). Measure on an otherwise idle machine: other work on the cores shows
# up directly in the ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
sweep=${1:-configs/sweeps/speedup-1000.yaml}
jobs=${2:-2}
dlsim=${DLSIM:-build/bin/dlsim}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
name=$(sed -n 's/^name: *//p' "$sweep")

run() {  # run JOBS: prints the wall seconds
  local start end
  start=$(date +%s.%N)
  "$dlsim" sweep "$sweep" --jobs "$1" --results-dir "$out/jobs$1" >"$out/log$1" 2>&1
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
t1=$(run 1)
tn=$(run "$jobs")
points=$(($(wc -l <"$out/jobs1/$name/runs.csv") - 1))
echo "cores: $(nproc); load average before the runs: $load, after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v n="$points" -v a="$t1" -v j="$jobs" -v b="$tn" \
  'BEGIN { printf "%d points: --jobs 1 %.2f s, --jobs %d %.2f s, speedup %.2fx\n", n, a, j, b, a / b }'
if cmp -s "$out/jobs1/$name/runs.csv" "$out/jobs$jobs/$name/runs.csv" &&
   cmp -s "$out/jobs1/$name/summary.md" "$out/jobs$jobs/$name/summary.md"; then
  echo "runs.csv and summary.md identical"
else
  echo "runs.csv or summary.md DIFFER between --jobs 1 and --jobs $jobs" >&2
  exit 1
fi
