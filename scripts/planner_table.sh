#!/usr/bin/env bash
# Regenerates the planner table of results/planners/README.md: every planner on every instance of
# shared/data/dsa, via the table mode of the planners benchmark (policies/planners/planners_benchmark.cc).
# Usage: scripts/planner_table.sh [BUILD_DIR] > table.md   (BUILD_DIR defaults to build)
# Environment: DLSIM_SHARED_DIR (default: the shared/ folder beside the checkout),
#              DLSIM_TABLE_MINIMALLOC_S (60) and DLSIM_TABLE_OTHER_S (10): the optimal planner's time limits.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"
export DLSIM_SHARED_DIR="${DLSIM_SHARED_DIR:-$root/../shared}"
json="$(mktemp)"
trap 'rm -f "$json"' EXIT
"$build/dlsim_policies_benchmark" --benchmark_filter='^PlannerTable/' --benchmark_format=json >"$json"
python3 - "$json" <<'PY'
import json, sys
rows = {}
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    _, planner, inst = b["name"].split("/", 2)
    inst = inst.split("/iterations")[0].split("/manual_time")[0]
    rows.setdefault(inst, {})[planner] = b
print("| instance | buffers | LOAD | greedy-by-size | best-fit | optimal | optimal / LOAD | proved | lower bound | optimal s |")
print("|---|---:|---:|---:|---:|---:|---:|---|---:|---:|")
for inst in sorted(rows):
    r = rows[inst]
    g, f, o = r["greedy-by-size"], r["best-fit"], r["optimal"]
    load = int(o["load"])
    cell = lambda x: f"{int(x['height']):,} ({x['ratio']:.4f})"
    print(f"| {inst} | {int(o['buffers'])} | {load:,} | {cell(g)} | {cell(f)} | {int(o['height']):,} | "
          f"{o['ratio']:.5f} | {'yes' if o['proved'] else 'no'} | {int(o['lower_bound']):,} | {o['real_time']/1000:.2f} |")
PY
