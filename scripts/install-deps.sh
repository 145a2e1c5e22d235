#!/usr/bin/env bash
# Installs the Debian packages dlsim builds with (clang: the sanitizer and fuzz build, scripts/sanitize-build.sh),
# and those its figures and studies need: python3-yaml reads the studies' manifests (scripts/regenerate.py),
# python3-matplotlib draws the figures (`dlsim plot`, a sweep's `plots:`), python3-torch's
# memory-snapshot reader checks `dlsim run --memory-snapshot` in the tests, and with python3-torchvision it runs
# `dlsim import-torch` (frontend/torch/) and its tests; coinor-cbc's `cbc` solves the `checkmate` swap policy's MILP.
# Safe to run again: does nothing when all are present.
# The CUDA Toolkit and cuDNN are not Debian packages: on these machines they live in /usr/local/cuda, and the
# build uses them when found (cmake -DDLSIM_WITH_CUDA=OFF builds without).
set -euo pipefail
packages=(
  build-essential clang cmake ninja-build ccache pkg-config
  libboost-graph-dev libyaml-cpp-dev catch2 libbenchmark-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libonnx-dev libprotobuf-dev protobuf-compiler
  python3-matplotlib python3-torch python3-torchvision python3-yaml
  openmpi-bin libopenmpi-dev
  coinor-cbc
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  echo "installing: ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
