#!/usr/bin/env bash
# Regenerates the tables of results/validation/h100-sxm/ from the measurements committed there (no GPU needed):
#   before.md      the uncalibrated file (datasheet figures and the per-class efficiencies fitted to published data,
#                  [F]) against the runs of its own plans (CUDA-graph device time)
#   after.md       the calibrated default (configs/hw/h100-sxm-harness.yaml) against the runs of its own plans
#   heldout.md     the CNNs calibrated on batch 32 only, predicting batch 64: against cuDNN's own choice (--workspace any;
#                  also with --class-model-only) and against the runs of its own batch-64 plans
#   lomo.md        leave one model out: calibrated on the other four models (both batches), predicting the fifth,
#                  measured first (the default) and with every unmeasured op on the [F] model (--class-model-only)
#   eager.md       the same plans issued eagerly (host launch costs included) beside their CUDA-graph replays
#   pytorch.md     PyTorch's caching allocator and iteration times on the same GPU beside dlsim's pytorch-caching
# Each table also has a .json beside it. Usage: results/validation/tables.sh   (after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
data=results/validation/h100-sxm
out=$data/tables
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in "$data"/runs/*/; do
  n=$(basename "$d")
  mkdir -p "$tmp/runs/$n"
  for f in "$d"*.xz; do xz -dc "$f" > "$tmp/runs/$n/$(basename "$f" .xz)"; done
done
report() { /usr/bin/python3 results/validation/sim_vs_real.py "$@"; }
all=("$tmp"/runs/*)
cnmem=("$tmp"/runs/{resnet50,vgg16,googlenet,mobilenet_v2}-b*-cnmem)
b64=("$tmp"/runs/{resnet50,vgg16,googlenet,mobilenet_v2}-b64-*)

report --runs "${all[@]}" --hw datasheet=configs/hw/h100-sxm-datasheet.yaml --trace trace.datasheet-graph.json \
  --report report.datasheet-graph.json --json "$out/before.json" > "$out/before.md"
report --runs "${all[@]}" --hw calibrated=configs/hw/h100-sxm-harness.yaml --trace trace.calibrated-graph.json \
  --report report.calibrated-graph.json --json "$out/after.json" --by-kind > "$out/after.md"

results/validation/calibrate_h100.sh --small-batch-only --models "resnet50 vgg16 googlenet mobilenet_v2" --out "$tmp/b32.yaml" \
  > /dev/null
results/validation/calibrate_h100.sh --small-batch-only --models "resnet50 vgg16 googlenet mobilenet_v2" --class-model-only \
  --out "$tmp/b32-classmodel.yaml" > /dev/null
{
  echo "### Against cuDNN's own algorithm choice (--workspace any, CUDA-graph replays)"
  report --runs "${b64[@]}" --hw datasheet=configs/hw/h100-sxm-datasheet.yaml batch32=$tmp/b32.yaml \
    batch32-classmodel=$tmp/b32-classmodel.yaml --trace trace.anyws-graph.json --report report.anyws-graph.json \
    --json "$out/heldout-anyws.json"
  echo
  echo "### Against the runs of the batch-32 file's own batch-64 plans (CUDA-graph replays)"
  report --runs "${b64[@]}" --hw batch32=$tmp/b32.yaml --trace trace.cal32-graph.json --report report.cal32-graph.json \
    --json "$out/heldout-own.json"
} > "$out/heldout.md"

{
  # Measured first ("without-<model>": a measured kind's correction, the [F] model for kinds no run measured), or
  # every unmeasured op on the [F] model ("without-<model>-classmodel", --class-model-only).
  all_models="resnet50 vgg16 googlenet mobilenet_v2 bert-base"
  for m in $all_models; do
    others=$(echo $all_models | tr ' ' '\n' | grep -vx "$m" | tr '\n' ' ')
    results/validation/calibrate_h100.sh --models "$others" --out "$tmp/without-$m.yaml" > /dev/null
    results/validation/calibrate_h100.sh --models "$others" --class-model-only --out "$tmp/without-$m-classmodel.yaml" > /dev/null
    tag=anyws-graph
    [[ $m == bert-base ]] && tag=calibrated-graph
    echo "### $m, calibrated on: $others"
    report --runs "$tmp"/runs/$m-b*-cnmem --hw datasheet=configs/hw/h100-sxm-datasheet.yaml "without-$m=$tmp/without-$m.yaml" \
      "without-$m-classmodel=$tmp/without-$m-classmodel.yaml" \
      --trace trace.$tag.json --report report.$tag.json --json "$out/lomo-$m.json"
    echo
  done
} > "$out/lomo.md"

python3 - "$tmp/runs" "$out" <<'EOF'
import json, os, sys, statistics
runs, out = sys.argv[1], sys.argv[2]
def its(p):
    t = json.load(open(p))
    return statistics.median((i["end"] - i["start"]) / 1e6 for i in t["iterations"])
rows = []
for n in sorted(os.listdir(runs)):
    d = os.path.join(runs, n)
    rep = json.load(open(os.path.join(d, "report.calibrated-eager.json")))
    rows.append({"run": n, "eager_ms": its(os.path.join(d, "trace.calibrated-eager.json")),
                 "graph_ms": its(os.path.join(d, "trace.calibrated-graph.json")),
                 "host_launch_ms": rep.get("host_launch_ns_per_iteration", 0) / 1e6})
with open(os.path.join(out, "eager.json"), "w") as f:
    json.dump(rows, f, indent=1, sort_keys=True)
    f.write("\n")
with open(os.path.join(out, "eager.md"), "w") as f:
    f.write("| run | eager ms | CUDA-graph replay ms | eager / replay | host time in launch calls, ms per iteration |\n")
    f.write("|---|---|---|---|---|\n")
    for r in rows:
        f.write(f"| {r['run']} | {r['eager_ms']:.2f} | {r['graph_ms']:.2f} | {r['eager_ms'] / r['graph_ms']:.2f} | "
                f"{r['host_launch_ms']:.1f} |\n")
EOF

/usr/bin/python3 results/validation/torch_comparison.py --torch "$data/torch_gpu.json" --json "$out/pytorch.json" > "$out/pytorch.md"
echo "tables written to $out/"
