#!/usr/bin/env bash
# Session 10's H200 lease (one call): LLM memory truth, step profiles of new models, cuDNN scratch with both
# gradients in one call, LLM GEMM shapes through the graph-timed sweep. Everything under $OUT (<= 8 files).
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
T0=$SECONDS
part() {  # part SECONDS NAME COMMAND...
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s, at $((SECONDS - T0)) s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 16
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
  pkill -9 -f "validate/torch/" 2>/dev/null; sleep 1
}
{ date -u +%FT%TZ; nvidia-smi; nproc; free -g | head -2
  python3 -c 'import torch, torchvision, transformers, platform; print("python", platform.python_version(), "torch", torch.__version__, "torchvision", torchvision.__version__, "transformers", transformers.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "device", torch.cuda.get_device_name())'
} 2>&1 | tee "$log" | tail -n 3
C=workloads/testdata/llama_configs
mkdir -p /tmp/mt
mem() {  # mem NAME SPEC BATCH SEQ CKPT
  if [ $((SECONDS - T0)) -gt 150 ]; then echo "memory $1: skipped (budget)" | tee -a "$log"; return; fi
  timeout -k 5 50 python3 validate/torch/torch_memory_truth.py --spec "hf:$C/$2" --batch "$3" --seq-len "$4" \
    --precision mixed-bf16 --optimizer adamw --checkpointing "$5" --stacks none --case-timeout 45 --max-seconds 46 \
    --out "/tmp/mt/$1.json" 2>&1 | tee -a "$log" | grep -E "ok|timeout|error|fail" | tail -n 2
}
mem llama1b-b2-none Llama-3.2-1B.config.json 2 2048 none
mem llama1b-b2-hf Llama-3.2-1B.config.json 2 2048 hf
mem qwen-b8-s1024-none Qwen2.5-0.5B.config.json 8 1024 none
mem qwen-b8-s1024-hf Qwen2.5-0.5B.config.json 8 1024 hf
mem gpt2-b16-s512-hf gpt2.config.json 16 512 hf
mem gpt2-b16-s512-none gpt2.config.json 16 512 none
python3 - "$OUT/memory-truth.json" /tmp/mt/*.json <<'PY'
import json, sys
docs = {}
for p in sys.argv[2:]:
    try:
        docs[p.rsplit("/", 1)[1][:-5]] = json.load(open(p))
    except Exception as e:  # a case cut off mid-write says so
        docs[p.rsplit("/", 1)[1][:-5]] = {"error": repr(e)}
json.dump(docs, open(sys.argv[1], "w"), indent=1)
PY
echo "=== memory done at $((SECONDS - T0)) s" | tee -a "$log"
part 235 step-profiles python3 validate/torch/torch_step_profile.py --out "$OUT/step-profiles.json" \
  --trace-dir /tmp/traces --max-seconds 195 --case-timeout 90 --cases \
"hf:$C/Llama-3.2-1B.config.json:2:2048:mixed-bf16:adamw,efficientnet_b0:32,shufflenet_v2_x1_0:64,vgg19:32,\
resnext50_32x4d:32,mobilenet_v3_large:64,convnext_tiny:32,regnet_y_800mf:32,wide_resnet50_2:32,densenet169:32,vit_b_16:32"
tar -C /tmp -cf /tmp/traces.tar traces 2>/dev/null
split -b 16000000 -a 1 /tmp/traces.tar "$OUT/traces.tar.part-"
ls -la "$OUT" | tee -a "$log"
for f in "$OUT"/traces.tar.part-[d-z]; do [ -e "$f" ] && { echo "dropped $f (file limit)" | tee -a "$log"; rm -f "$f"; }; done
part 62 conv-bwd python3 validate/torch/conv_workspace_probe.py --shapes .lease/conv-step-shapes.json \
  --passes conv_bwd,conv_fwd --dtypes float32 --max-seconds 55 --out "$OUT/conv-workspace-bwd.json"
left=$((575 - (SECONDS - T0))); [ $left -gt 60 ] && left=60
[ $left -gt 15 ] && part $left kernels-graph python3 validate/torch/kernel_sweep.py --timing graph \
  --shapes .lease/llm-gemm-shapes.json --random 0 --random-gemms 20 --random-sdpa 6 --max-seconds $((left - 12)) \
  --out "$OUT/kernels-graph-llm.json"
echo "done at $((SECONDS - T0)) s $(date -u +%FT%TZ)" | tee -a "$log"
ls -la "$OUT"
