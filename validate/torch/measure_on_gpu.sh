#!/usr/bin/env bash
# The PyTorch measurements of one short GPU lease, in priority order, each under its own time limit so that a
# slow part cannot take the others' time; everything lands in $OUT (at most 8 files come back from a lease).
#   OUT=/some/dir validate/torch/measure_on_gpu.sh [SHAPES.json]
# SHAPES.json: the kernel shapes for the device-time sweep (dlsim fit-kernels --shapes-of ... --out FILE), made
# where dlsim is built. Parts (results/fidelity/README.md says what each feeds):
#   step-profiles.json + traces.tar  validate/torch/torch_step_profile.py (eager, profiler, graph replay per model)
#   memory-truth.json                validate/torch/torch_memory_truth.py (the allocator's peaks, workspaces)
#   concurrency.json                 validate/torch/torch_concurrency_reference.py (streams, eager and graphed)
#   kernels-graph.json               validate/torch/kernel_sweep.py --timing graph (device time per kernel)
set -u
: "${OUT:?set OUT to the folder for the results}"
cd "$(dirname "$0")/../.."
shapes=${1:-}
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
py=${PYTHON:-python3}
part() {  # part SECONDS NAME COMMAND...: runs it under a limit, its output in the log
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 25
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
}
{
  date -u +%FT%TZ; nvidia-smi; uname -a; nproc
  $py -c 'import torch, torchvision, platform; print("python", platform.python_version(), "torch", torch.__version__,
"torchvision", torchvision.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
"device", torch.cuda.get_device_name())'
  $py -c 'import transformers; print("transformers", transformers.__version__)'
} >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

part 215 step-profiles $py validate/torch/torch_step_profile.py --out "$OUT/step-profiles.json" \
  --trace-dir /tmp/traces --max-seconds 185
tar -C /tmp -cf "$OUT/traces.tar" traces 2>/dev/null

if [ -f validate/torch/torch_memory_truth.py ]; then
  part 140 memory-truth $py validate/torch/torch_memory_truth.py --out "$OUT/memory-truth.json" --max-seconds 120
fi
if [ -f validate/torch/torch_concurrency_reference.py ]; then
  part 140 concurrency $py validate/torch/torch_concurrency_reference.py --out "$OUT/concurrency.json" \
    --max-seconds 120
fi
if [ -n "$shapes" ]; then
  part 65 kernels-graph $py validate/torch/kernel_sweep.py --timing graph --shapes "$shapes" --random 40 \
    --random-gemms 40 --random-sdpa 10 --max-seconds 50 --out "$OUT/kernels-graph.json"
fi
echo "done $(date -u +%FT%TZ)" | tee -a "$log"
