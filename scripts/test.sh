#!/usr/bin/env bash
# Installs what dlsim needs, builds it, and runs every test.
#   scripts/test.sh             the normal build (build/)
#   scripts/test.sh --sanitize  an ASan+UBSan build (build-asan/), without the CUDA backend and benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [[ ${1:-} == --sanitize ]]; then
  export BUILD_DIR=build-asan
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  scripts/build.sh -DDLSIM_SANITIZE=ON -DDLSIM_WITH_CUDA=OFF -DDLSIM_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug
else
  export BUILD_DIR=build
  scripts/build.sh
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
