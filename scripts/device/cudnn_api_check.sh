#!/usr/bin/env bash
# cuDNN's legacy convolution calls against its graph API (dlsim-cuda run --cudnn-api legacy|graph) on a GPU, in
# one device call of at most 4 minutes: `dlsim-cuda selftest` (our kernels and the convolutions of both APIs
# against CPU references), then every plan of RUN_DIR under both APIs, replayed in a CUDA graph and eager, and a
# table per plan of the median iteration time, the host's time in launch calls (eager), and the convolutions'
# device time per iteration.
#   scripts/device/cudnn_api_check.sh RUN_DIR OUT_DIR
# RUN_DIR is made here by
#   LEAN=1 CONFIGS='configs/validation/concurrency/*serial.yaml' scripts/prepare_validation.sh RUN_DIR
# (dlsim-cuda, lib/, one plan.json.gz per plan). OUT_DIR gets four files: log.txt, selftest.txt, summary.txt and
# results.tar.gz (per plan and run: trace.<api>-<mode>.json, report.<api>-<mode>.json, the run's log).
# DEADLINE (seconds, default 200) bounds the whole script; RUN_TIMEOUT (default 40) each run.
set -u
run_dir=$1
out=$2
deadline=${DEADLINE:-200}
mkdir -p "$out/res"
exec > >(tee -a "$out/log.txt") 2>&1
source "$(dirname "$0")/gpu_run_env.sh"  # left, bounded, cuda and the library path
echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
ldd "$cuda" | grep -E "cudnn|cublas"

echo "== selftest"
bounded 60 "$cuda" selftest > "$out/selftest.txt" 2>&1
echo "rc=$? ($(grep -c '^  ok' "$out/selftest.txt") ok, $(grep -c '^  FAIL' "$out/selftest.txt") failed)"
grep -E "FAIL|passed|FAILED" "$out/selftest.txt"

# Plan by plan, both APIs and both timings, so that a deadline cuts whole plans, not one API.
for d in "$run_dir"/*/; do
  n=$(basename "$d")
  [[ -f $d/plan.json.gz && ! -f $d/plan.json ]] && gunzip -k "$d/plan.json.gz"
  [[ -f $d/plan.json ]] || continue
  mkdir -p "$out/res/$n"
  for api in legacy graph; do
    for mode in graph eager; do
      flags=(--cudnn-api "$api")
      [[ $mode == graph ]] && flags+=(--cuda-graph)
      tag=$api-$mode
      t0=$(date +%s.%N)
      bounded "${RUN_TIMEOUT:-40}" "$cuda" run "$d/plan.json" "${flags[@]}" --out "$out/res/$n/trace.$tag.json" \
        --report "$out/res/$n/report.$tag.json" > "$out/res/$n/log.$tag.txt" 2>&1
      rc=$?
      echo "$n [$tag] rc=$rc $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$t0" "$(date +%s.%N)")"
      [[ $rc == 0 ]] || tail -3 "$out/res/$n/log.$tag.txt"
    done
  done
done

python3 - "$run_dir" "$out/res" > "$out/summary.txt" <<'PY'
import json, os, statistics, sys
run_dir, res = sys.argv[1], sys.argv[2]
print(f"{'plan':32} {'api':6} {'mode':5} {'iter ms':>9} {'conv ms':>9} {'host ms [conv]':>18} {'convs':>5} "
      f"{'plans':>5} {'engines':>7}")
print("iter ms: median iteration; conv ms: median per iteration of the convolution ops' spans; host ms: host time in "
      "launch calls per eager iteration (all ops; conv ops apart in brackets); plans: execution plans built (graph API)")
for n in sorted(os.listdir(res)):
    plan_path = os.path.join(run_dir, n, "plan.json")
    if not os.path.exists(plan_path):
        continue
    ops = json.load(open(plan_path))["graph"]["ops"]
    conv = {o["id"] for o in ops if o["kind"] in ("Conv2d", "Conv2dBwdData", "Conv2dBwdFilter")}
    for api in ("legacy", "graph"):
        for mode in ("graph", "eager"):
            tp = os.path.join(res, n, f"trace.{api}-{mode}.json")
            rp = os.path.join(res, n, f"report.{api}-{mode}.json")
            if not (os.path.exists(tp) and os.path.exists(rp)):
                print(f"{n:32} {api:6} {mode:5} {'(no result)':>9}")
                continue
            t, r = json.load(open(tp)), json.load(open(rp))
            its = [(i["end"] - i["start"]) / 1e6 for i in t["iterations"]]
            per_it = {}
            for o in t["ops"]:
                if o["op"] in conv and 0 <= o["iteration"] < len(its):  # measured iterations only
                    per_it[o["iteration"]] = per_it.get(o["iteration"], 0) + (o["end"] - o["start"]) / 1e6
            host = r.get("host_launch_ns_per_iteration")
            by_kind = r.get("host_launch_ns_per_iteration_by_kind", {})
            conv_host = sum(v for k, v in by_kind.items() if k in ("Conv2d", "Conv2dBwdData", "Conv2dBwdFilter"))
            algos = r.get("conv_algorithms", {})
            engines = {a.get("algorithm", "") for a in algos.values()}
            host_s = f"{host / 1e6:9.3f} [{conv_host / 1e6:6.3f}]" if host is not None else f"{'-':>18}"
            print(f"{n:32} {api:6} {mode:5} {statistics.median(its) if its else float('nan'):9.3f} "
                  f"{statistics.median(per_it.values()) if per_it else float('nan'):9.3f} {host_s} {len(algos):5} "
                  f"{r.get('conv_plans', 0):5} {len(engines):7}")
PY
cat "$out/summary.txt"
echo "== $(date -u +%FT%TZ) done after ${SECONDS} s"
tar -C "$out/res" -czf "$out/results.tar.gz" .
rm -rf "$out/res"
