#pragma once
// `capuchin`: Capuchin (Peng et al., ASPLOS 2020; notes allocators-and-swap.md B4): per tensor, swap it to the
// host when the transfer hides behind compute, else recompute it when that costs less than the swap's stall,
// ranked by memory saved per second (MSPS), until the load fits the budget. Capuchin learns the tensor access
// times by running its first iteration; here the no-swap profile gives them. Its runtime feedback (moving a
// swap-in earlier when a back-access still waits) is not reproduced: the choice is made once
// (capuchin_selection.h). Parameters: the budget (limit_fraction / limit_mb, memory_limit.h) and the smallest
// tensor considered (min_bytes). Tests: capuchin_swap_test.cc.
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/memory_limit.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct CapuchinOptions {
  uint64_t min_bytes = uint64_t{1} << 20;
  MemoryLimit limit;

  static const ParamBindings<CapuchinOptions>& parameters();
};

class CapuchinSwap : public SwapPolicy {
 public:
  explicit CapuchinSwap(CapuchinOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  CapuchinOptions o_;
};

}  // namespace dlsim
