#!/usr/bin/env bash
# Fetches the upstream allocators' sources that tests/upstream/ replays traces through, at the commits the
# checks were written against, into ${UPSTREAM_DIR:-../upstream} (outside the checkout: not our code).
#   scripts/get_upstream_sources.sh
#   scripts/build.sh -DDLSIM_UPSTREAM_CNMEM_DIR=../upstream/cnmem -DDLSIM_UPSTREAM_TF_BFC_DIR=../upstream/tsl
#   ctest --test-dir build -R upstream -V
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${UPSTREAM_DIR:-../upstream}
mkdir -p "$dir"
# NVIDIA/cnmem: the last commit of its master branch (2018-11-28); cnmem has had no release since 1.0.
cnmem_commit=37896cc9bfc6536a8c878a1e675835c22d827821
if [[ ! -d $dir/cnmem/.git ]]; then
  git clone --quiet https://github.com/NVIDIA/cnmem "$dir/cnmem"
fi
git -C "$dir/cnmem" checkout --quiet "$cnmem_commit"
echo "cnmem at $cnmem_commit in $dir/cnmem: configure with -DDLSIM_UPSTREAM_CNMEM_DIR=$(cd "$dir/cnmem" && pwd)"

# TensorFlow's BFC allocator: TSL's tsl/framework/ (bfc_allocator, allocator_retry, allocator.h) at the last commit
# of google/tsl before it moved to openxla/xla as xla/tsl/framework/ (2024-06-17); the replay has not been run against
# later XLA versions. Only tsl/framework/ is checked out. TSL_REPO may name a local mirror.
tsl_commit=8f1df69e1217939e0e9ae907461cea747e80f680
if [[ ! -d $dir/tsl/.git ]]; then
  git clone --quiet --no-checkout "${TSL_REPO:-https://github.com/google/tsl}" "$dir/tsl"
  git -C "$dir/tsl" sparse-checkout set tsl/framework
fi
git -C "$dir/tsl" checkout --quiet "$tsl_commit"
echo "TSL at $tsl_commit in $dir/tsl: configure with -DDLSIM_UPSTREAM_TF_BFC_DIR=$(cd "$dir/tsl" && pwd)"
