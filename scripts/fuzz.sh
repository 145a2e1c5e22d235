#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang and runs one or all of them.
#   scripts/fuzz.sh [--runs N] [--seconds S] [--build-only] [TARGET|all]
#     TARGET: experiment_yaml sweep_yaml hardware_yaml onnx_model instance_csv plan_json trace_json model_config_json
#             fuzz_case_yaml kernel_sweep_json torch_step_json torch_profile_json interconnect_yaml
#             nccl_bandwidth_json (default: all)
#     --runs N      executions per target (default 20000 when neither limit is given)
#     --seconds S   at most S seconds per target (with --runs: whichever comes first)
#     --build-only  build, assemble the seed corpora, run nothing
#   FUZZ_SANITIZERS  unset or address,undefined (the default): the sanitizer build, build-asan/, configured as
#                    scripts/test.sh --sanitize configures it (scripts/sanitize-build.sh), so CI's fuzz step reuses
#                    what the tests built; anything else, e.g. "" (libFuzzer alone, the fastest, for long
#                    campaigns): a separate build, build-fuzz/
#   FUZZ_BUILD_DIR   build folder (default: build-asan or build-fuzz, above)
#   FUZZ_ARGS        extra libFuzzer flags, e.g. "-jobs=1 -print_final_stats=1"
# Each target's corpus grows in $FUZZ_BUILD_DIR/corpus/TARGET; it starts from the seeds assembled in
# $FUZZ_BUILD_DIR/seeds/TARGET (configs/, tests/data, tests/scenarios, the ONNX test models, fuzz/corpus/TARGET).
# A crash, sanitizer report, timeout or out-of-memory stops that target, leaves the input in
# $FUZZ_BUILD_DIR/artifacts/TARGET/ and makes the script exit 1 (after running the other targets).
# Replay one input: $FUZZ_BUILD_DIR/fuzz/TARGET_fuzzer FILE (from the repository root).
set -euo pipefail
cd "$(dirname "$0")/.."
all_targets=(experiment_yaml sweep_yaml hardware_yaml onnx_model instance_csv plan_json trace_json model_config_json
  fuzz_case_yaml kernel_sweep_json torch_step_json torch_profile_json interconnect_yaml nccl_bandwidth_json)
runs=
seconds=
build_only=0
targets=()
while (($#)); do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    all) targets=("${all_targets[@]}"); shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *)
      if [[ " ${all_targets[*]} " != *" $1 "* ]]; then
        echo "unknown fuzz target '$1'; valid: ${all_targets[*]}, all" >&2
        exit 2
      fi
      targets+=("$1"); shift ;;
  esac
done
((${#targets[@]})) || targets=("${all_targets[@]}")
[[ -n $runs || -n $seconds ]] || runs=20000

sanitizers=${FUZZ_SANITIZERS-address,undefined}
if ! command -v clang++ >/dev/null; then scripts/install-deps.sh; fi
source scripts/sanitize-build.sh
if [[ $sanitizers == address,undefined ]]; then
  build=${FUZZ_BUILD_DIR:-$sanitize_build_dir}
  cmake_args=("${sanitize_cmake_args[@]}")
else
  build=${FUZZ_BUILD_DIR:-build-fuzz}
  cmake_args=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=None "-DCMAKE_CXX_FLAGS=-O1 -gline-tables-only"
    -DDLSIM_FUZZ=ON -DDLSIM_FUZZ_SANITIZERS="$sanitizers" -DDLSIM_WITH_CUDA=OFF -DDLSIM_BUILD_BENCHMARKS=OFF)
fi
cmake -S . -B "$build" -G Ninja "${cmake_args[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/%/_fuzzer}"

# The seeds: the repository's own inputs of each kind, plus fuzz/corpus/TARGET (what they do not cover).
seed_files() {
  local dirs=() pattern='*.yaml'
  case $1 in
    experiment_yaml) dirs=(configs/experiments configs/validation configs/validation/swap tests/data); pattern='exp-*.yaml' ;;
    sweep_yaml) dirs=(configs/sweeps results/*/) ;;  # the studies' sweep files beside their manifests
    hardware_yaml) dirs=(configs/hw tests/data); pattern='h*.yaml' ;;
    model_config_json) dirs=(workloads/testdata/llama_configs); pattern='*.json' ;;
    fuzz_case_yaml) dirs=(tests/simfuzz) ;;
    torch_step_json) dirs=(workloads/testdata/torch_steps tests/data/bad-input); pattern='*.torchstep.json' ;;
    onnx_model) dirs=(workloads/testdata/onnx); pattern='*.onnx' ;;
    instance_csv) dirs=(tests/data); pattern='*.csv' ;;
    kernel_sweep_json) dirs=(tests/data/bad-input); pattern='kernel-sweep-*.json' ;;  # and fuzz/corpus's records
    torch_profile_json) dirs=(tests/data/bad-input); pattern='torch-profile-*.json' ;;  # and fuzz/corpus's GPU step
    nccl_bandwidth_json) dirs=(tests/data/bad-input); pattern='nccl-*.json' ;;  # and fuzz/corpus's measurements
    plan_json|trace_json) ;;  # no such files are committed: fuzz/corpus/ holds small ones dlsim wrote
    interconnect_yaml) ;;  # no hardware file holds the section yet: fuzz/corpus/ has two
  esac
  local d
  for d in "${dirs[@]}"; do
    # a configs/ folder holds one kind of file under any name, a results/<study>/ folder its sweep files beside
    # its manifest, tests/data/ every kind under a prefix
    if [[ $d == configs/* ]]; then find "$d" -maxdepth 1 -name '*.yaml'
    elif [[ $d == results/* ]]; then find "$d" -maxdepth 1 -name '*.yaml' ! -name study.yaml
    else find "$d" -maxdepth 1 -name "$pattern" -size -32k; fi  # -size: the small ONNX models (-max_len below)
  done
  if [[ -d fuzz/corpus/$1 ]]; then find "fuzz/corpus/$1" -type f; fi
  return 0
}
max_len() {
  case $1 in
    onnx_model|plan_json|trace_json) echo 32768 ;;
    torch_step_json) echo 65536 ;;
    *) echo 16384 ;;
  esac
}
dict() {
  case $1 in
    *_yaml|model_config_json) echo fuzz/dict/yaml.dict ;;
    onnx_model) echo fuzz/dict/onnx.dict ;;
    plan_json|trace_json|kernel_sweep_json|torch_step_json|torch_profile_json|nccl_bandwidth_json) echo fuzz/dict/json.dict ;;
    instance_csv) echo fuzz/dict/csv.dict ;;
  esac
}

failed=()
for t in "${targets[@]}"; do
  seeds="$build/seeds/$t"
  rm -rf "$seeds"
  mkdir -p "$seeds" "$build/corpus/$t" "$build/artifacts/$t"
  seed_files "$t" | while read -r f; do cp "$f" "$seeds/$(echo "$f" | tr / _)"; done
  ((build_only)) && continue
  limit=()
  [[ -n $runs ]] && limit+=(-runs="$runs")
  [[ -n $seconds ]] && limit+=(-max_total_time="$seconds")
  echo "== fuzz $t (${limit[*]})"
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  if ! "$build/fuzz/${t}_fuzzer" "${limit[@]}" -seed=1 -max_len="$(max_len "$t")" -dict="$(dict "$t")" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t/" \
      ${FUZZ_ARGS:-} "$build/corpus/$t" "$seeds" 2>"$build/$t.log"; then
    tail -n 60 "$build/$t.log"
    echo "FAILED: fuzz target $t (log: $build/$t.log, input: $build/artifacts/$t/)"
    failed+=("$t")
  else
    grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|Done)' "$build/$t.log" | tail -n 2
  fi
done
if ((${#failed[@]})); then
  echo "fuzz targets that found a crash: ${failed[*]}"
  exit 1
fi
