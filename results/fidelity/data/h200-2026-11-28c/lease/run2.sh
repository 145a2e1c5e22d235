#!/usr/bin/env bash
# Session 12's H200 lease, call 2: the eleven CNNs' step profiles on this machine's host, ViT-B/16, Llama 3.2 1B's
# step profile (a longer case limit), and the LLM GEMM shapes' graph-timed sweep.
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
T0=$SECONDS
part() {
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s, at $((SECONDS - T0)) s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 14
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
  pkill -9 -f "validate/torch/" 2>/dev/null; sleep 1
}
date -u +%FT%TZ | tee "$log"
C=workloads/testdata/llama_configs
part 175 step-profiles-eleven python3 validate/torch/torch_step_profile.py --out "$OUT/step-profiles-eleven.json" \
  --trace-dir /tmp/traces --max-seconds 160 --case-timeout 60 --cases \
"mobilenet_v2:64,googlenet:32,inception_v3:32,resnet18:32,vgg16:32,densenet121:32,resnet101:32,squeezenet1_1:64,\
alexnet:128,resnet152:32,vit_b_16:32"
tar -C /tmp -cf /tmp/traces.tar traces 2>/dev/null
split -b 16000000 -a 1 /tmp/traces.tar "$OUT/traces-eleven.tar.part-"
part 150 step-profile-llama python3 validate/torch/torch_step_profile.py --out "$OUT/step-profile-llama1b.json" \
  --max-seconds 10 --case-timeout 140 --cases "hf:$C/Llama-3.2-1B.config.json:2:2048:mixed-bf16:adamw"
left=$((400 - (SECONDS - T0))); [ $left -gt 90 ] && left=90
[ $left -gt 20 ] && part $left kernels-graph-llm python3 validate/torch/kernel_sweep.py --timing graph \
  --shapes .lease/llm-gemm-shapes.json --random 0 --random-gemms 20 --random-sdpa 6 --max-seconds $((left - 12)) \
  --out "$OUT/kernels-graph-llm.json"
echo "done at $((SECONDS - T0)) s $(date -u +%FT%TZ)" | tee -a "$log"
ls -la "$OUT"
