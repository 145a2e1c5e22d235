#include "experiment/memory_breakdown.h"

namespace dlsim {

namespace {

uint64_t model_states(const MemorySnapshot& s) {
  using parallel::MemoryCategory;
  const auto at = [&](MemoryCategory c) { return s.bytes[static_cast<size_t>(c)]; };
  return at(MemoryCategory::Weights) + at(MemoryCategory::Gradients) + at(MemoryCategory::OptimizerState);
}

}  // namespace

MemoryBreakdown memory_breakdown(const Trace& trace, const Graph& g, const std::vector<parallel::MemoryCategory>& categories) {
  MemoryBreakdown out;
  MemorySnapshot now;
  now.iteration = -1;
  bool any = false;
  for (const MemRecord& m : trace.mem) {
    const auto c = static_cast<size_t>(parallel::category_of(g, categories, m.tensor));
    if (m.action == MemAction::Alloc) {
      now.bytes[c] += m.bytes;
      now.allocated += m.bytes;
    } else {
      now.bytes[c] -= m.bytes;
      now.allocated -= m.bytes;
    }
    now.reserved = m.reserved_after;
    now.iteration = m.iteration;
    now.time = m.time;
    if (!any || now.allocated > out.at_peak_live.allocated) out.at_peak_live = now;
    if (!any || now.reserved > out.at_peak_reserved.reserved) out.at_peak_reserved = now;
    if (!any || model_states(now) > model_states(out.at_peak_model_states)) out.at_peak_model_states = now;
    any = true;
  }
  return out;
}

namespace {

nlohmann::json snapshot_json(const MemorySnapshot& s) {
  nlohmann::json j;
  for (size_t i = 0; i < parallel::kMemoryCategories.size(); ++i) j[to_string(parallel::kMemoryCategories[i])] = s.bytes[i];
  j["allocated"] = s.allocated;
  j["reserved"] = s.reserved;
  // Live tensors sit in memory the pool holds, so reserved >= allocated; the guard only keeps a pool that
  // reported otherwise from wrapping around.
  j["allocator_overhead"] = s.reserved > s.allocated ? s.reserved - s.allocated : 0;
  j["iteration"] = s.iteration;
  return j;
}

}  // namespace

nlohmann::json to_json(const MemoryBreakdown& b) {
  return {{"at_peak_live", snapshot_json(b.at_peak_live)},
          {"at_peak_reserved", snapshot_json(b.at_peak_reserved)},
          {"at_peak_model_states", snapshot_json(b.at_peak_model_states)}};
}

}  // namespace dlsim
