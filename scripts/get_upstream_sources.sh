#!/usr/bin/env bash
# Fetches the upstream allocators' sources that tests/upstream/ replays traces through, at the commits the
# checks were written against, into ${UPSTREAM_DIR:-../upstream} (outside the checkout: not our code).
#   scripts/get_upstream_sources.sh
#   scripts/build.sh -DDLSIM_UPSTREAM_CNMEM_DIR=../upstream/cnmem -DDLSIM_UPSTREAM_TF_BFC_DIR=../upstream/tsl \
#                    -DDLSIM_UPSTREAM_PYTORCH_DIR=../upstream/pytorch
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

# PyTorch's caching allocator: two files, not a clone (the repository is several GB). CUDACachingAllocator.cpp at
# pytorch/pytorch 001074d (the version dlsim's pytorch-caching was written from; it predates max_non_split_rounding)
# and the CUDAAllocatorConfig.h whose accessors that file calls (5e8d0b1). The sha256 sums are those of the files
# the replay was run against (tests/upstream/README.md); a different download is reported, not used silently.
mkdir -p "$dir/pytorch/c10/cuda"
while read -r commit path sum; do
  if [[ ! -f $dir/pytorch/$path ]]; then
    curl -fsSL "https://raw.githubusercontent.com/pytorch/pytorch/$commit/$path" -o "$dir/pytorch/$path"
  fi
  if [[ $(sha256sum "$dir/pytorch/$path" | cut -d' ' -f1) != "$sum" ]]; then
    echo "warning: $dir/pytorch/$path is not the file the replay was checked against (sha256 $sum)" >&2
  fi
done <<'FILES'
001074d25084fdb87a799823e395a50f5ec044d3 c10/cuda/CUDACachingAllocator.cpp 04fb8a51dd4deb31c536ece74618e4811cc38c3dddea47eb4340af838ba71e2c
5e8d0b136bdc73d23c48ce92a7c848213ea55d5c c10/cuda/CUDAAllocatorConfig.h 558cf5324035c00779fd4c85fe31daf954cff1f716a805b65a45263099a80177
FILES
echo "PyTorch allocator files in $dir/pytorch: configure with -DDLSIM_UPSTREAM_PYTORCH_DIR=$(cd "$dir/pytorch" && pwd)"
