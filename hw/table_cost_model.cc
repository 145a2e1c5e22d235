#include "hw/table_cost_model.h"

#include "common/sim_time.h"
#include "hw/collective_op.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <set>

#include "hw/batch_signature.h"
#include "hw/op_signature.h"

namespace dlsim {

namespace {

// The time of `key` at batch n from the entry measured at the nearest batch (the larger one on a tie).
std::optional<TimeNs> scaled_time(const GpuSpec& spec, const std::string& key, int64_t n, TimeNs kernel_fixed_ns) {
  auto it = spec.kernel_times_by_batch.find(key);
  if (it == spec.kernel_times_by_batch.end() || it->second.empty() || n <= 0) return std::nullopt;
  const std::pair<int64_t, TimeNs>* best = nullptr;
  for (const auto& e : it->second)
    if (!best || std::llabs(e.first - n) <= std::llabs(best->first - n)) best = &e;
  const double fixed = static_cast<double>(std::min(kernel_fixed_ns, best->second));
  const double t = fixed + (static_cast<double>(best->second) - fixed) * static_cast<double>(n) /
                               static_cast<double>(best->first);
  return std::max<TimeNs>(1, checked_duration_ns(t, spec.file, "kernel_times", "the time of '" + key + "' scaled to batch " +
                                                                         std::to_string(n)));
}

}  // namespace

// A measured time with the roofline's grid (the measurement says how long, not how the kernel was laid out).
KernelCost TableCostModel::with_grid(const Graph& g, const Op& op, TimeNs t) const {
  const RooflineCostModel::Grid gr = roofline_.grid(g, op);
  return KernelCost{t, roofline_.sm_fraction(g, op), gr.blocks, gr.blocks_per_sm};
}

KernelCost TableCostModel::cost(const Graph& g, const Op& op) const {
  // Every model prices a collective from the interconnect alike (hw/collective_op.h).
  if (is_collective(op.kind)) return collective_kernel_cost(spec(), op);
  const auto& table = spec().kernel_times;
  auto it = table.find(op_signature(g, op));
  if (it != table.end()) {
    ++hits_;
    return with_grid(g, op, it->second);
  }
  if (!spec().kernel_times_by_batch.empty())
    if (auto key = batch_free_signature(g, op))
      if (auto t = scaled_time(spec(), key->key, key->batch, roofline_.options().kernel_fixed_ns)) {
        ++hits_;
        return with_grid(g, op, *t);
      }
  ++misses_;
  return roofline_.cost(g, op);
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
      continue;
    }
    auto key = batch_free_signature(g, op);
    if (key && spec().kernel_times_by_batch.count(key->key)) {
      ++c.scaled;
    } else if (seen.insert(sig).second) {
      c.missing.push_back(sig);
    }
  }
  return c;
}

nlohmann::json TableCostModel::report(const Graph& g) const {
  const TableCoverage c = coverage(g);
  return {{"ops", c.ops}, {"measured_ops", c.hits}, {"scaled_from_another_batch", c.scaled},
          {"unmeasured_signatures", c.missing.size()}};
}

void register_table(KernelModelRegistry& r) {
  r.add({"table",
         "measured kernel times by op signature (the hardware file's kernel_times, written by dlsim calibrate), "
         "else the same op measured at another batch scaled by the batch, else the roofline",
         RooflineOptions::parameters().specs(), [](const Params& p, const GpuSpec& spec) -> std::unique_ptr<KernelCostModel> {
           return std::make_unique<TableCostModel>(spec, RooflineOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
