#pragma once
// The alternative kernels of a convolution that KernelCostModel::variants offers by default, and why their
// costs are what they are. cuDNN offers several algorithms per convolution (implicit GEMM, precomputed implicit
// GEMM, FFT, Winograd...) and several tile configurations per algorithm; a framework picks the fastest one
// alone (cudnnFind), which launches enough blocks to fill every SM and often wants a large workspace. Under
// co-execution a narrower or workspace-free kernel can win (the SPAA 2020 brief announcement's remedy; Rammer's
// figure 15: kernels chosen for co-scheduling ran 2.7x slower alone, 29.2 vs 10.9 ms on ResNeXt-29, yet the
// whole graph ran 1.31x faster).
#include <vector>

#include "hw/cost_model.h"

namespace dlsim {

// small-grid: half the thread blocks of the default kernel, each doing twice the work (bigger tiles or a longer
// K loop per block). Alone it takes kSmallGridSlowdown times as long: half the blocks in flight nearly double the
// time; the bigger tiles reuse each loaded operand more and leave no ragged last wave, which we take to recover
// 5 % (2 x 0.95 = 1.9). In SM-time (duration x sm_fraction) it is then 5 % cheaper than the default, so a fluid
// sharing model rewards it only a little; its real value shows under block dispatch in launch order (the
// "leftover" policy), where a full-grid kernel holds every SM until its tail and a half-grid one leaves room for
// its sibling from the start. A guess, not a measurement: Rammer's co-scheduled kernels ran 2.7x slower alone.
constexpr double kSmallGridSlowdown = 1.9;
// implicit-gemm: cuDNN's IMPLICIT_GEMM algorithm needs no workspace and is the usual fallback under a workspace
// limit; the faster FFT/Winograd/precomputed algorithms it replaces are typically 1.2-1.5x faster (mu-cuDNN
// measured 1.21-1.63x whole-network gains from lifting the workspace limit). We take 1.3x, same grid.
constexpr double kImplicitGemmSlowdown = 1.3;

bool has_kernel_variants(OpKind k);  // convolutions: forward, backward-data, backward-filter

// The default variants of `op` given its variant-0 cost and workspace (KernelCostModel::variants).
std::vector<KernelVariant> derived_kernel_variants(const Op& op, const KernelCost& base, uint64_t workspace_bytes);

}  // namespace dlsim
