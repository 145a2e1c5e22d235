#include "hw/table_cost_model.h"

#include <set>

#include "hw/op_signature.h"

namespace dlsim {

KernelCost TableCostModel::cost(const Graph& g, const Op& op) const {
  const auto& table = spec().kernel_times;
  auto it = table.find(op_signature(g, op));
  if (it == table.end()) {
    ++misses_;
    return roofline_.cost(g, op);
  }
  ++hits_;
  return KernelCost{it->second, sm_fraction(spec(), g, op)};
}

TableCoverage TableCostModel::coverage(const Graph& g) const {
  TableCoverage c;
  std::set<std::string> seen;
  for (const Op& op : g.ops()) {
    if (op.flops <= 0 && op.bytes_read == 0 && op.bytes_written == 0) continue;
    ++c.ops;
    std::string sig = op_signature(g, op);
    if (spec().kernel_times.count(sig)) {
      ++c.hits;
    } else if (seen.insert(sig).second) {
      c.missing.push_back(sig);
    }
  }
  return c;
}

}  // namespace dlsim
