#pragma once
// `vdnn`: the virtualized DNN memory manager of Rhu et al. (MICRO'16; notes allocators-and-swap.md B1).
// Layer-granular: every forward op is a layer, and the feature maps a layer reads (its X) that the backward
// pass reads again are offloaded during the forward pass and prefetched during the backward pass.
// - policy all (vDNN_all): the X of every layer; conv (vDNN_conv): the X of convolution layers only.
// - Offload: on the memory stream, issued with the last forward layer that reads X (vDNN's reference count of
//   consumers), overlapping that layer's compute; at the end of that layer vDNN synchronises the memory stream
//   and releases X, so the next layer waits for an offload that is not done (free_after = that layer).
// - Prefetch: one layer ahead in the backward pass: X is fetched while the backward layer before its first
//   backward consumer runs (issued before that layer starts), and that consumer waits for it (vDNN's
//   synchronisation at the layer boundary). A backward "layer" is the run of backward ops of one forward op.
// Weights are never offloaded; X with no backward reader is freed by the graph already and needs no copy.
// vDNN_dyn (profiling passes that pick layers and cuDNN algorithms until the network fits) is not
// reproduced. Tests: vdnn_swap_test.cc.
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct VdnnOptions {
  bool conv_only = false;  // policy: conv

  static const ParamBindings<VdnnOptions>& parameters();
};

class VdnnSwap : public SwapPolicy {
 public:
  explicit VdnnSwap(VdnnOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  VdnnOptions o_;
};

}  // namespace dlsim
