#!/usr/bin/env bash
# Session 12's H200 lease, call 3: GPT-2 HF without checkpointing (segments per warm-up step), four step profiles
# repeated (the same machine's run-to-run spread), and a seeded random sweep (seed 7).
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
T0=$SECONDS
part() {
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s, at $((SECONDS - T0)) s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 8
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
  pkill -9 -f "validate/torch/" 2>/dev/null; sleep 1
}
date -u +%FT%TZ | tee "$log"
C=workloads/testdata/llama_configs
part 35 gpt2-none-segments python3 validate/torch/torch_memory_truth.py --spec "hf:$C/gpt2.config.json" --batch 8 \
  --seq-len 1024 --precision mixed-bf16 --optimizer adamw --checkpointing none --stacks none --warmup 3 --steps 2 \
  --case-timeout 30 --max-seconds 32 --out "$OUT/memory-truth-gpt2-none-segments.json"
part 70 step-profiles-repeat python3 validate/torch/torch_step_profile.py --out "$OUT/step-profiles-repeat.json" \
  --max-seconds 60 --case-timeout 30 --cases "resnet50:32,googlenet:32,densenet121:32,shufflenet_v2_x1_0:64"
left=$((150 - (SECONDS - T0)))
[ $left -gt 20 ] && part $left kernels-random python3 validate/torch/kernel_sweep.py --seed 7 --random 60 \
  --random-gemms 30 --random-sdpa 4 --max-seconds $((left - 10)) --out "$OUT/kernels-random-seed7.json"
echo "done at $((SECONDS - T0)) s $(date -u +%FT%TZ)" | tee -a "$log"
ls -la "$OUT"
