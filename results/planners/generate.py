#!/usr/bin/env bash
# Regenerates the planner table of results/planners/README.md: greedy-by-size, best-fit and optimal on every
# instance of shared/data/dsa, one `dlsim plan --json` run at a time (sequentially, so the runs do not compete
# for the CPU with each other).
# Usage: scripts/planner_table.sh [DLSIM_BINARY] > table.md   (default: build/bin/dlsim)
# Environment: DLSIM_SHARED_DIR (default: the shared/ folder beside the checkout),
#              DLSIM_TABLE_MINIMALLOC_S (60) and DLSIM_TABLE_OTHER_S (10): the optimal planner's time limits.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dlsim="${1:-$root/build/bin/dlsim}"
shared="${DLSIM_SHARED_DIR:-$root/../shared}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for f in $(cd "$shared/data/dsa" && ls */*.csv | sort); do
  limit="${DLSIM_TABLE_OTHER_S:-10}"
  [[ "$f" == minimalloc/* ]] && limit="${DLSIM_TABLE_MINIMALLOC_S:-60}"
  for p in greedy-by-size best-fit optimal; do
    args=()
    [[ "$p" == optimal ]] && args=(--time-limit "$limit")
    "$dlsim" plan "$shared/data/dsa/$f" --planner "$p" "${args[@]}" --json | sed "s|^|$f $p |" >>"$tmp/rows"
  done
done
python3 - "$tmp/rows" <<'PY'
import json, sys
rows = {}
for line in open(sys.argv[1]):
    inst, planner, js = line.split(" ", 2)
    rows.setdefault(inst, {})[planner] = json.loads(js)
print("| instance | buffers | LOAD | greedy-by-size | best-fit | optimal | optimal / LOAD | proved | lower bound | optimal s |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
for inst in sorted(rows):
    r = rows[inst]
    g, f, o = r["greedy-by-size"], r["best-fit"], r["optimal"]
    cell = lambda x: f"{x['height']:,} ({x['ratio']:.4f})"
    print(f"| {inst} | {o['buffers']} | {o['load']:,} | {cell(g)} | {cell(f)} | {o['height']:,} | "
          f"{o['ratio']:.6f} | {'yes' if o['optimal'] else 'no'} | {o['lower_bound']:,} | {o['seconds']:.2f} |")
PY
