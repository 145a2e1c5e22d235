#!/usr/bin/env bash
# Fetches the upstream allocators' sources that tests/upstream/ replays traces through, at the commits the
# checks were written against, into ${UPSTREAM_DIR:-../upstream} (outside the checkout: not our code).
#   scripts/get_upstream_sources.sh
#   scripts/build.sh -DDLSIM_UPSTREAM_CNMEM_DIR=../upstream/cnmem
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
