#!/usr/bin/env bash
# Installs what dlsim needs, builds it, and runs every test.
#   scripts/test.sh             the normal build (build/)
#   scripts/test.sh --sanitize  the sanitizer build (build-asan/, scripts/sanitize-build.sh): clang, ASan+UBSan,
#                               the libFuzzer targets too (scripts/fuzz.sh runs them), no CUDA backend or benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# A unity build (CMake compiles up to 16 files of a library as one translation unit, so each header is parsed
# once per batch, not once per file): about a third of the CPU time of a build from scratch, which is what this
# script usually does. DLSIM_UNITY_BUILD=OFF builds file by file (quicker to rebuild after editing one file).
unity=(-DCMAKE_UNITY_BUILD="${DLSIM_UNITY_BUILD:-ON}" -DCMAKE_UNITY_BUILD_BATCH_SIZE=16)
if [[ ${1:-} == --sanitize ]]; then
  source scripts/sanitize-build.sh
  export BUILD_DIR=$sanitize_build_dir
  scripts/build.sh "${sanitize_cmake_args[@]}" "${unity[@]}"
else
  export BUILD_DIR=build
  scripts/build.sh "${unity[@]}"
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
