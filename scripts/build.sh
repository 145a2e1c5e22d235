#!/usr/bin/env bash
# Configures and builds dlsim into build/ (or $BUILD_DIR). Extra arguments go to cmake's configure step,
# e.g. -DDLSIM_SANITIZE=ON or -DDLSIM_WITH_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
