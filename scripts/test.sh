#!/usr/bin/env bash
# Installs what dlsim needs, builds it, and runs every test.
#   scripts/test.sh             the normal build (build/)
#   scripts/test.sh --sanitize  the sanitizer build (build-asan/, scripts/sanitize-build.sh): clang, ASan+UBSan,
#                               the libFuzzer targets too (scripts/fuzz.sh runs them), no CUDA backend or benchmarks
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if [[ ${1:-} == --sanitize ]]; then
  source scripts/sanitize-build.sh
  export BUILD_DIR=$sanitize_build_dir
  scripts/build.sh "${sanitize_cmake_args[@]}"
else
  export BUILD_DIR=build
  scripts/build.sh
fi
ctest --test-dir "$BUILD_DIR" --output-on-failure -j"$(nproc)"
