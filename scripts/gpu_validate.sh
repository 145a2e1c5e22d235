#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool) over a folder prepared here by scripts/prepare_validation.sh:
# dlsim-cuda, lib/ (yaml-cpp), and one plan per experiment (DIR/<experiment>/plan.json or plan.json.gz).
#   scripts/gpu_validate.sh RUN_DIR OUT_DIR [STAGES]
# STAGES, a comma list, run in this order: devices, selftest (our kernels against CPU references), quick
# (micro-benchmarks, 1 minute), runs, micro (full
# micro-benchmarks), torchprof (PyTorch per-op profile), torch (PyTorch memory and time ground truth).
# Default: devices,runs,micro,torch.
# The runs stage runs every plan once per entry of RUN_SETS, a ';'-separated list of TAG:FLAGS (default
# "eager:"), writing <experiment>/trace.TAG.json and report.TAG.json; e.g.
#   RUN_SETS="eager:;graph:--cuda-graph;anyws-graph:--cuda-graph --workspace any"
# A run that fails is repeated with --check (one iteration, synchronising after every command) so that an
# asynchronous fault names its op. Everything lands in OUT_DIR/results.tar.gz (the device tool brings back at
# most 8 files) and the log in OUT_DIR/log.txt. DEADLINE (seconds, default 540) bounds the whole script: a step
# starts only with time left, and its timeout is cut to what remains. RUNS (a glob, default *) picks experiments.
set -u
run_dir=$1
out=$2
stages=${3:-devices,runs,micro,torch}
deadline=${DEADLINE:-540}
mkdir -p "$out/res"
log=$out/log.txt
exec > >(tee -a "$log") 2>&1
has() { [[ ",$stages," == *",$1,"* ]]; }
source "$(dirname "$0")/device/gpu_run_env.sh"  # left, bounded, cuda and the library path
here=$(cd "$(dirname "$0")" && pwd)
echo "== $(date -u +%FT%TZ) on $(hostname); LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,power.limit,temperature.gpu \
  --format=csv | tee "$out/res/nvidia-smi.csv"
ldd "$cuda" | grep -E "cudnn|cublas|yaml"

if has devices; then
  echo "== devices"
  "$cuda" devices | tee "$out/res/devices.txt"
fi
if has selftest; then
  echo "== selftest"
  bounded 120 "$cuda" selftest | tee "$out/res/selftest.txt"; echo "rc=${PIPESTATUS[0]}"
fi
if has quick; then
  echo "== microbench --quick"
  bounded 180 "$cuda" microbench --quick --out "$out/res/micro-quick.json"; echo "rc=$?"
fi
if has runs; then
  IFS=';' read -r -a sets <<< "${RUN_SETS:-eager:}"
  for set in "${sets[@]}"; do
    tag=${set%%:*}
    read -r -a flags <<< "${set#*:}"
    for d in "$run_dir"/${RUNS:-*}/; do
      n=$(basename "$d")
      [[ -f $d/plan.json.gz && ! -f $d/plan.json ]] && gunzip -k "$d/plan.json.gz"
      [[ -f $d/plan.json ]] || continue
      mkdir -p "$out/res/$n"
      echo "== run $n [$tag] ${flags[*]:-}"
      t0=$SECONDS
      bounded ${RUN_TIMEOUT:-90} "$cuda" run "$d/plan.json" "${flags[@]}" --out "$out/res/$n/trace.$tag.json" \
        --report "$out/res/$n/report.$tag.json"
      rc=$?
      echo "rc=$rc ($((SECONDS - t0)) s)"
      if [[ $rc != 0 && $rc != 3 && $rc != 4 && $rc != 124 ]]; then
        echo "== run $n again with --check"
        bounded ${RUN_TIMEOUT:-90} "$cuda" run "$d/plan.json" --out "$out/res/$n/trace.check.json" --warmup 0 \
          --iterations 1 --check
        echo "rc=$?"
      fi
    done
  done
fi
if has micro; then
  echo "== microbench (full)"
  bounded 420 "$cuda" microbench --out "$out/res/micro.json"; echo "rc=$?"
fi
if has torchprof; then
  echo "== PyTorch per-op profile"
  for c in ${TORCH_PROFILES:-resnet50,32 resnet50,64}; do
    PYTHONUNBUFFERED=1 bounded 120 python3 "$here/../validate/torch/torch_gpu_ground_truth.py" --profile $c --out "$out/res/torch_profile_${c/,/_b}.json"
    echo "rc=$?"
  done
fi
if has torch; then
  echo "== PyTorch ground truth"
  PYTHONUNBUFFERED=1 bounded 420 python3 "$here/../validate/torch/torch_gpu_ground_truth.py" --out "$out/res/torch_gpu.json"
  echo "rc=$?"
fi
echo "== $(date -u +%FT%TZ) done"
tar -C "$out/res" -czf "$out/results.tar.gz" .
rm -rf "$out/res"
