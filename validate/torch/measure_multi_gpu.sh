#!/usr/bin/env bash
# The link measurements of one lease of a machine with several GPUs (issue 32, item 5), everything in $OUT, each
# part under its own limit; the whole takes at most about 7 minutes (the device tool's limit is 10 per command).
#   OUT=/some/dir validate/torch/measure_multi_gpu.sh
# Parts, in priority order (docs/multi-gpu.md, "Measuring and fitting the links", says what each feeds):
#   nccl-ring.json     validate/torch/nccl_bandwidth.py with NCCL_NVLS_ENABLE=0 (ring and tree, what
#                      hw/collective_model.h models): all-reduce, all-gather, reduce-scatter, 8 B to 1 GiB, every
#                      power-of-two group size up to the GPU count and the count itself (RING_SECONDS, 150)
#   nccl-default.json  the same over all GPUs with NCCL's own choice (NVLS where NVSwitch offers it: what PyTorch
#                      runs by default; DEFAULT_SECONDS, 60)
#   fsdp-step.tar.gz   validate/torch/fsdp_step.py on 2 GPUs: fsdp-step.json, its config, experiment and the rank-0
#                      profiler trace (FSDP_SECONDS, 120)
#   nccl-debug.txt     NCCL_DEBUG=INFO (INIT, GRAPH) of the ring run: channels, rings, trees, NVLS support
#   log.txt            the machine (nvidia-smi, topology), versions, each part's output and exit code
# DEVICE=cpu runs the same plumbing on 2 gloo CPU processes with small sizes (a check of this script, no GPU; its
# files are refused by dlsim fit-interconnect unless --allow-cpu).
# Afterwards, where dlsim is built:
#   dlsim fit-interconnect --nccl nccl-ring.json --hw h100-sxm --out h100-links.yaml   (or the machine's file)
#   dlsim run fsdp-step/fsdp-step-experiment.yaml   (hw: the fitted file; beside fsdp-step.json's numbers)
set -u
: "${OUT:?set OUT to the folder for the results}"
cd "$(dirname "$0")/../.."
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
log=$OUT/log.txt
part() {  # part SECONDS NAME COMMAND...: runs it under a limit, its output in the log
  local limit=$1 name=$2; shift 2
  echo "=== $name (limit ${limit}s) $(date -u +%FT%TZ)" | tee -a "$log"
  local t0=$SECONDS
  timeout --signal=TERM --kill-after=10 "$limit" "$@" 2>&1 | tee -a "$log" | tail -n 20
  echo "=== $name: rc ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$log"
}
{
  date -u +%FT%TZ; nvidia-smi; nvidia-smi topo -m; uname -a; nproc
  $py -c 'import torch, platform; print("python", platform.python_version(), "torch", torch.__version__, "cuda",
torch.version.cuda, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
  $py -c 'import transformers; print("transformers", transformers.__version__)'
} >"$log" 2>&1
gpus=$($py -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
dev=() max=1G
if [ "${DEVICE:-cuda}" = cpu ]; then dev=(--backend gloo --device cpu) max=64K gpus=2; fi
if [ "$gpus" -lt 2 ]; then
  echo "measure_multi_gpu.sh: $gpus GPU(s) visible: the links need 2 or more" | tee -a "$log"
  exit 3
fi
groups=""
for g in 2 4 8 16 32 64; do [ "$g" -le "$gpus" ] && groups="$groups${groups:+,}$g"; done
case ",$groups," in *",$gpus,"*) ;; *) groups="$groups,$gpus" ;; esac

mkdir -p /tmp/nccl-debug
NCCL_NVLS_ENABLE=0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH NCCL_DEBUG_FILE=/tmp/nccl-debug/%h.%p.txt \
  part $((${RING_SECONDS:-150} + 45)) nccl-ring $py validate/torch/nccl_bandwidth.py --out "$OUT/nccl-ring.json" \
  "${dev[@]}" --group-sizes "$groups" --max-bytes "$max" --max-seconds "${RING_SECONDS:-150}"
cat /tmp/nccl-debug/*.txt 2>/dev/null | head -c 4000000 >"$OUT/nccl-debug.txt"
part $((${DEFAULT_SECONDS:-60} + 45)) nccl-default $py validate/torch/nccl_bandwidth.py \
  "${dev[@]}" --out "$OUT/nccl-default.json" --max-bytes "$max" --max-seconds "${DEFAULT_SECONDS:-60}"
part "${FSDP_SECONDS:-120}" fsdp-step $py validate/torch/fsdp_step.py --out-dir /tmp/fsdp-step --world 2 "${dev[@]}" \
  --max-seconds $((${FSDP_SECONDS:-120} - 20))
tar -C /tmp -czf "$OUT/fsdp-step.tar.gz" fsdp-step 2>/dev/null
echo "done $(date -u +%FT%TZ)" | tee -a "$log"
