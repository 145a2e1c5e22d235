#!/usr/bin/env bash
# Rebuilds configs/hw/h100-sxm-harness.yaml from the measurements committed in results/validation/h100-sxm/ (no GPU):
# the CUDA-graph timed runs of the cnmem experiments (device time per op) — for the CNNs under cuDNN's own
# algorithm choice (`dlsim-cuda run --cuda-graph --workspace any`, whose reports also give the workspace each
# convolution really wanted), for BERT-base (no convolutions) its plain runs —, the micro-benchmarks (PCIe,
# cudaMalloc/cudaFree, launch), and the plans those runs executed, which `dlsim validate` rewrites here
# deterministically from configs/validation/ and the datasheet file.
#   results/validation/calibrate_h100.sh [--small-batch-only] [--models "resnet50 vgg16 googlenet mobilenet_v2 bert-base"]
#                             [--class-model-only] [--out FILE]
# Default: every model at both of its batches (CNNs 32 and 64, BERT 16 and 32), written to
# configs/hw/h100-sxm-harness.yaml (the default h100-sxm.yaml rests on PyTorch-level data instead:
# validate/torch/ship_hw_files.py). Subsets give the held-out and leave-one-model-out files of
# results/validation/h100-sxm/README.md (e.g. --small-batch-only --out /tmp/small.yaml). Measured first: an op no
# table entry serves takes its kind's measured correction of the single-efficiency roofline (op_class_scale), and
# only a kind no run measured the input's per-class model ([F] values fitted to published data,
# results/published/README.md). --class-model-only writes no per-kind correction (every unmeasured op takes the [F] model;
# the tables compare the two on models left out).
set -euo pipefail
cd "$(dirname "$0")/../.."
small_only=0
class_model=()
models="resnet50 vgg16 googlenet mobilenet_v2 bert-base"
out=configs/hw/h100-sxm-harness.yaml
while [[ $# -gt 0 ]]; do
  case $1 in
    --small-batch-only) small_only=1; shift ;;
    --models) models=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --class-model-only) class_model=(--class-model-only); shift ;;
    *) echo "usage: $0 [--small-batch-only] [--models LIST] [--class-model-only] [--out FILE]" >&2; exit 2 ;;
  esac
done
data=results/validation/h100-sxm
input=configs/hw/h100-sxm-datasheet.yaml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dirs=()
for m in $models; do
  case $m in
    bert-base) batches="16 32"; tag=calibrated-graph ;;  # no convolutions: the plain runs are cuDNN-choice free
    *) batches="32 64"; tag=anyws-graph ;;
  esac
  [[ $small_only == 1 ]] && batches=${batches%% *}
  for b in $batches; do
    n=$m-b$b-cnmem
    [[ -d $data/runs/$n ]] || { echo "no measurements for $n in $data/runs" >&2; exit 1; }
    d=$tmp/$n
    mkdir -p "$d"
    grep -v '^hw:' "configs/validation/$n.yaml" > "$tmp/$n.yaml"
    echo "hw: $(realpath "$input")" >> "$tmp/$n.yaml"
    rc=0
    build/bin/dlsim validate "$tmp/$n.yaml" --out "$d" --warmup 2 --iterations 5 --cuda-binary /nonexistent \
      >/dev/null 2>&1 || rc=$?
    [[ $rc == 0 || $rc == 3 ]] || { echo "dlsim validate $n failed ($rc)" >&2; exit 1; }
    xz -dc "$data/runs/$n/trace.$tag.json.xz" > "$d/trace.cuda.json"
    xz -dc "$data/runs/$n/report.$tag.json.xz" > "$d/report.cuda.json"
    cp "$data/micro.json" "$d/micro.json"
    dirs+=("$d")
  done
done
build/bin/dlsim calibrate "${dirs[@]}" --hw "$input" --out "$tmp/calibrated.yaml" "${class_model[@]}"
{
  echo "# NVIDIA H100 SXM5 80GB HBM3, calibrated on a real one (driver 580.159.04, CUDA 13.0, cuDNN 9.14.0) on"
  echo "# 2026-11-23: written by results/validation/calibrate_h100.sh$([[ $small_only == 1 ]] && echo " --small-batch-only")${class_model[*]:+ ${class_model[*]}} --models \"$models\""
  echo "# from results/validation/h100-sxm/ (how it was measured, and the error it leaves, are there)."
  echo "# Fitted: PCIe bandwidths and latency, launch overhead, cudaMalloc/cudaFree, and concurrent_kernels'"
  echo "# co_run_slowdown and gemm_blocks_per_sm (the concurrent convolutions) from micro.json; kernel_times (median"
  echo "# device time per op signature, CUDA-graph replays); conv_workspace (what cuDNN's first-choice algorithm needed);"
  if [[ ${#class_model[@]} -gt 0 ]]; then
    echo "# for ops no table entry serves, the datasheet file's per-class efficiencies ([F], fitted to published data on"
    echo "# the A100 and V100: results/published/README.md). Everything else is"
  else
    echo "# roofline.op_class_scale (measured / roofline per op kind, for ops no table entry serves; a kind no run measured"
    echo "# takes the datasheet file's per-class efficiencies, [F], fitted to published data: results/published/README.md)."
    echo "# Everything else is"
  fi
  echo "# the datasheet file's (configs/hw/h100-sxm-datasheet.yaml, whose comments give the sources)."
  sed 's/^description: .*/description: NVIDIA H100 SXM5 80GB HBM3, PCIe Gen5 x16 host link (calibrated on a real H100, 2026-11-23)/' \
    "$tmp/calibrated.yaml"
} > "$out"
echo "wrote $out"
