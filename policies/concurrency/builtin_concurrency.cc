// The built-in concurrency policies, in the order `dlsim list` shows them.
#include "policies/concurrency/concurrency_policy.h"

namespace dlsim {

namespace {
// What frameworks do by default: every op on one stream, in the graph's own order.
class SerialSchedule : public ConcurrencyPolicy {
 public:
  Schedule schedule(const Graph& g, const KernelCostModel&) override {
    Schedule s;
    s.num_streams = 1;
    s.order.reserve(g.ops().size());
    for (const Op& op : g.ops()) s.order.push_back(op.id);
    s.stream_of.assign(g.ops().size(), 0);
    return s;
  }
};
}  // namespace

const ConcurrencyRegistry& concurrency_registry() {
  static const ConcurrencyRegistry reg = [] {
    ConcurrencyRegistry r("concurrency policy");
    r.add({"serial", "every op on one stream in graph order (the frameworks' default)", {},
           [](const Params&) -> std::unique_ptr<ConcurrencyPolicy> { return std::make_unique<SerialSchedule>(); }});
    return r;
  }();
  return reg;
}

}  // namespace dlsim
