#!/usr/bin/env bash
# The PyTorch measurements of one short GPU lease, in priority order, each under its own time limit so that a
# slow part cannot take the others' time; everything lands in $OUT (at most 8 files come back from a lease).
#   OUT=/some/dir validate/torch/measure_on_gpu.sh [SHAPES.json]
# SHAPES.json: the kernel shapes for the device-time sweep (dlsim fit-kernels --shapes-of ... --out FILE), made
# where dlsim is built. Parts (results/fidelity/README.md says what each feeds):
#   step-profiles.json + traces.tar  validate/torch/torch_step_profile.py (eager, profiler, graph replay per model)
#   memory-truth.json                validate/torch/torch_memory_truth.py (the allocator's peaks, workspaces)
#   concurrency.json                 validate/torch/torch_concurrency_reference.py (streams, eager and graphed)
#   conv-workspace.json              validate/torch/conv_workspace_probe.py (cuDNN's scratch per convolution)
#   kernels-graph.json               validate/torch/kernel_sweep.py --timing graph (device time per kernel)
# Knobs (environment), defaults as the first lease ran it:
#   STEP_CASES     torch_step_profile.py --cases (default: its own list of 13 CNNs)
#   STEP_SECONDS   the step profiles' budget (170)       SWEEP_SECONDS  the graph-timed sweep's budget (38)
#   MEMORY_ARGS    torch_memory_truth.py's case arguments (default: its own list)
#   CONCURRENCY_CASES  torch_concurrency_reference.py --cases (default: its own list)
#   CONCURRENCY_SECONDS  the concurrency reference's budget (110)
#   SKIP           parts to leave out, space-separated names (e.g. "concurrency conv-workspace")
set -u
: "${OUT:?set OUT to the folder for the results}"
STEP_SECONDS=${STEP_SECONDS:-170}
SWEEP_SECONDS=${SWEEP_SECONDS:-38}
SKIP=" ${SKIP:-} "
cd "$(dirname "$0")/../.."
shapes=${1:-}
export PYTHONUNBUFFERED=1
log=$OUT/log.txt
py=${PYTHON:-python3}
part() {  # part SECONDS NAME COMMAND...: runs it under a limit, its output in the log
  local limit=$1 name=$2; shift 2
  case "$SKIP" in *" $name "*) echo "=== $name: skipped (SKIP)" | tee -a "$log"; return;; esac
  echo "=== $name (limit ${limit}s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 25
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
  pkill -9 -f "$2" 2>/dev/null  # a part's per-case children outlive a timeout of their parent
  sleep 1
}
{
  date -u +%FT%TZ; nvidia-smi; uname -a; nproc
  $py -c 'import torch, torchvision, platform; print("python", platform.python_version(), "torch", torch.__version__,
"torchvision", torchvision.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(),
"device", torch.cuda.get_device_name())'
  $py -c 'import transformers; print("transformers", transformers.__version__)'
} 2>&1 | tee "$log"

part $((STEP_SECONDS + 30)) step-profiles $py validate/torch/torch_step_profile.py --out "$OUT/step-profiles.json" \
  --trace-dir /tmp/traces --max-seconds "$STEP_SECONDS" ${STEP_CASES:+--cases "$STEP_CASES"}
tar -C /tmp -cf /tmp/traces.tar traces 2>/dev/null
# A file over 16 MiB does not come back from a lease: split the traces into two parts if need be.
if [ "$(stat -c %s /tmp/traces.tar 2>/dev/null || echo 0)" -gt 16000000 ]; then
  split -b 16000000 -a 1 /tmp/traces.tar "$OUT/traces.tar.part-"
else
  cp /tmp/traces.tar "$OUT/" 2>/dev/null
fi

if [ -f validate/torch/torch_memory_truth.py ]; then
  # shellcheck disable=SC2086  (MEMORY_ARGS is a list of arguments)
  part 130 memory-truth $py validate/torch/torch_memory_truth.py --out "$OUT/memory-truth.json" --max-seconds 110 \
    --case-timeout 50 ${MEMORY_ARGS:-}
fi
if [ -f validate/torch/torch_concurrency_reference.py ]; then
  part $((${CONCURRENCY_SECONDS:-110} + 20)) concurrency $py validate/torch/torch_concurrency_reference.py \
    --out "$OUT/concurrency.json" --child-timeout 45 --max-seconds "${CONCURRENCY_SECONDS:-110}" \
    ${CONCURRENCY_CASES:+--cases "$CONCURRENCY_CASES"}
fi
if [ -n "$shapes" ]; then
  part 35 conv-workspace $py validate/torch/conv_workspace_probe.py --shapes "$shapes" \
    --out "$OUT/conv-workspace.json" --max-seconds 28
  part $((SWEEP_SECONDS + 12)) kernels-graph $py validate/torch/kernel_sweep.py --timing graph --shapes "$shapes" \
    --random 40 --random-gemms 40 --random-sdpa 10 --max-seconds "$SWEEP_SECONDS" --out "$OUT/kernels-graph.json"
fi
echo "done $(date -u +%FT%TZ)" | tee -a "$log"
