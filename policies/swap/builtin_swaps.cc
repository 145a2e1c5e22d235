// The built-in swap policies, in the order `dlsim list` shows them.
#include "policies/swap/swap_policy.h"

namespace dlsim {

namespace {
// Keeps every tensor on the device.
class NoSwap : public SwapPolicy {
 public:
  SwapPlan plan(const Graph&, const IterationProfile&, const TransferModel&, uint64_t) override { return {}; }
};
}  // namespace

const SwapRegistry& swap_registry() {
  static const SwapRegistry reg = [] {
    SwapRegistry r("swap policy");
    r.add({"none", "keep every tensor in device memory", {},
           [](const Params&) -> std::unique_ptr<SwapPolicy> { return std::make_unique<NoSwap>(); }});
    return r;
  }();
  return reg;
}

}  // namespace dlsim
