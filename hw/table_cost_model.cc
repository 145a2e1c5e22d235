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
  return KernelCost{it->second, roofline_.sm_fraction(g, op)};
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

nlohmann::json TableCostModel::report(const Graph& g) const {
  const TableCoverage c = coverage(g);
  return {{"ops", c.ops}, {"measured_ops", c.hits}, {"unmeasured_signatures", c.missing.size()}};
}

void register_table(KernelModelRegistry& r) {
  r.add({"table",
         "measured kernel times by op signature (the hardware file's kernel_times, written by dlsim calibrate); "
         "the roofline for ops not measured",
         RooflineOptions::specs(), [](const Params& p, const GpuSpec& spec) -> std::unique_ptr<KernelCostModel> {
           return std::make_unique<TableCostModel>(spec, RooflineOptions::from_params(p));
         }});
}

}  // namespace dlsim
