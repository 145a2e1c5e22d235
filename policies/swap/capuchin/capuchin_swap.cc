#include "policies/swap/capuchin/capuchin_swap.h"

#include "policies/swap/capuchin/capuchin_selection.h"
#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/core/remat_graph.h"

namespace dlsim {

const ParamBindings<CapuchinOptions>& CapuchinOptions::parameters() {
  using O = CapuchinOptions;
  static const auto b = ParamBindings<O>()
      .add("min_bytes", &O::min_bytes, "smallest tensor considered for swapping or recomputation",
           ParamCheck::at_least(0))
      .add_all(&O::limit, MemoryLimit::parameters());
  return b;
}

SwapResult CapuchinSwap::plan(const SwapContext& ctx) {
  const RematGraph rg(ctx.graph, ctx.schedule.order, ctx.profile);
  const uint64_t no_swap_peak = ctx.profile.peak_live_bytes > 0 ? ctx.profile.peak_live_bytes : rg.load().peak();
  const uint64_t budget = o_.limit.resolve(no_swap_peak, ctx.device_capacity);
  SwapResult out;
  out.target_bytes = budget;
  if (ctx.profile.op_start.size() != ctx.schedule.order.size()) {  // no access times: nothing to decide from
    out.report = {{"note", "no profile"}};
    return out;
  }
  CapuchinSelector planner(rg, ctx.profile, ctx.schedule.stream_of, copy_time_from_link(ctx.link), o_.min_bytes);
  CapuchinChoice c = planner.plan(budget);
  out.plan = std::move(c.plan);
  size_t recomputed = 0;
  for (const Recomputation& r : out.plan.recomputations) recomputed += r.drops.size();
  out.report = {{"budget_bytes", budget},
                {"planned_peak_bytes", c.peak_bytes},
                {"limit_met", c.shortfall_bytes == 0},
                {"shortfall_bytes", c.shortfall_bytes},
                {"swaps", out.plan.actions.size()},
                {"hidden_swaps", c.hidden_swaps},
                {"estimated_swap_stall_ms", static_cast<double>(c.swap_overhead_ns) / 1e6},
                {"recomputed_tensors", recomputed},
                {"recomputations", out.plan.recomputations.size()},
                {"replayed_ops", c.replayed_ops},
                {"recompute_ms", static_cast<double>(c.recompute_ns) / 1e6}};
  return out;
}

}  // namespace dlsim
