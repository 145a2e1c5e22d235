#!/usr/bin/env bash
# Call 2: the LLM memory cases call 1 cut off (a 1.2B model's CPU initialisation alone takes ~45 s).
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
T0=$SECONDS
C=workloads/testdata/llama_configs
mem() {  # mem NAME SPEC BATCH SEQ CKPT LIMIT
  local left=$((285 - (SECONDS - T0)))
  [ "$left" -lt 30 ] && { echo "$1: skipped (budget)"; return; }
  local lim=$6; [ "$lim" -gt "$left" ] && lim=$left
  echo "=== $1 (limit $lim s, at $((SECONDS - T0)) s)"
  timeout -k 3 "$lim" python3 validate/torch/torch_memory_truth.py --spec "hf:$C/$2" --batch "$3" --seq-len "$4" \
    --precision mixed-bf16 --optimizer adamw --checkpointing "$5" --stacks none --case-timeout $((lim - 4)) \
    --max-seconds $((lim - 4)) --out "$OUT/mt-$1.json" 2>&1 | tail -n 4
}
mem llama1b-b2-none Llama-3.2-1B.config.json 2 2048 none 120
mem llama1b-b2-hf Llama-3.2-1B.config.json 2 2048 hf 120
mem qwen-b8-s1024-hf Qwen2.5-0.5B.config.json 8 1024 hf 60
echo "done at $((SECONDS - T0)) s"; ls -la "$OUT"
