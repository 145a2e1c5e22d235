#!/usr/bin/env bash
# Session 12's H200 lease (one call): allocator segments of GPT-2 HF-checkpointed and Inception-v3, step profiles of
# ResNet-50 (the host's speed beside earlier machines) and the nine models held out of the fit, cuDNN's grouped and
# depthwise convolutions of the recorded steps (channels-last fp32 included). Everything under $OUT.
set -u
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
T0=$SECONDS
part() {  # part SECONDS NAME COMMAND...
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s, at $((SECONDS - T0)) s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 8
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
  pkill -9 -f "validate/torch/" 2>/dev/null; sleep 1
}
{ date -u +%FT%TZ; nvidia-smi; nproc; free -g | head -2; lscpu | grep -E "Model name|MHz|^CPU\(s\)"
  python3 -c 'import torch, torchvision, transformers, platform; print("python", platform.python_version(), "torch", torch.__version__, "torchvision", torchvision.__version__, "transformers", transformers.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "device", torch.cuda.get_device_name())'
} 2>&1 | tee "$log" | tail -n 4
C=workloads/testdata/llama_configs
part 45 gpt2-hf-segments python3 validate/torch/torch_memory_truth.py --spec "hf:$C/gpt2.config.json" --batch 8 \
  --seq-len 1024 --precision mixed-bf16 --optimizer adamw --checkpointing hf --stacks none --warmup 3 --steps 2 \
  --case-timeout 38 --max-seconds 40 --out "$OUT/memory-truth-gpt2-hf-segments.json"
part 45 inception-segments python3 validate/torch/torch_memory_truth.py --spec torchvision:inception_v3 --batch 32 --image-size 299 \
  --stacks none --case-timeout 38 --max-seconds 40 --out "$OUT/memory-truth-inception_v3-b32.json"
part 235 step-profiles python3 validate/torch/torch_step_profile.py --out "$OUT/step-profiles.json" \
  --trace-dir /tmp/traces --max-seconds 200 --case-timeout 60 --cases \
"resnet50:32,efficientnet_b0:32,shufflenet_v2_x1_0:64,vgg19:32,resnext50_32x4d:32,mobilenet_v3_large:64,\
convnext_tiny:32,regnet_y_800mf:32,wide_resnet50_2:32,densenet169:32"
tar -C /tmp -cf /tmp/traces.tar traces 2>/dev/null
split -b 16000000 -a 1 /tmp/traces.tar "$OUT/traces.tar.part-"
left=$((520 - (SECONDS - T0))); [ $left -gt 130 ] && left=130
[ $left -gt 20 ] && part $left kernels-grouped python3 validate/torch/kernel_sweep.py \
  --shapes .lease/grouped-conv-shapes.json --random 0 --random-gemms 0 --random-sdpa 0 \
  --max-seconds $((left - 12)) --out "$OUT/kernels-grouped.json"
echo "done at $((SECONDS - T0)) s $(date -u +%FT%TZ)" | tee -a "$log"
ls -la "$OUT"
