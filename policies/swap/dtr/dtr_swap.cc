#include "policies/swap/dtr/dtr_swap.h"

#include "policies/swap/dtr/dtr_runtime.h"

namespace dlsim {

const ParamBindings<DtrOptions>& DtrOptions::parameters() {
  using O = DtrOptions;
  static const auto b = ParamBindings<O>()
      .add_choice("heuristic", &O::heuristic,
                  ParamChoices<DtrHeuristicKind>{{"full", DtrHeuristicKind::Full},
                                                 {"eq", DtrHeuristicKind::Eq},
                                                 {"local", DtrHeuristicKind::Local}},
                  "eviction score c/(m*s) with c: full (the evicted neighbourhood's cost, the paper's h_DTR), eq (its "
                  "equivalence-class approximation, used by the paper's PyTorch prototype) or local (the tensor's "
                  "own cost)")
      .add_all(&O::limit, MemoryLimit::parameters());
  return b;
}

SwapResult DtrSwap::plan(const SwapContext& ctx) {
  const std::vector<OpId>& order = ctx.schedule.order;
  const RematGraph rg(ctx.graph, order, ctx.profile);
  const uint64_t no_swap_peak = ctx.profile.peak_live_bytes > 0 ? ctx.profile.peak_live_bytes : rg.load().peak();
  const uint64_t budget = o_.limit.resolve(no_swap_peak, ctx.device_capacity);
  DtrRun run = run_dtr(rg, budget, o_.heuristic);
  SwapResult out;
  out.target_bytes = budget;
  out.plan.recomputations = std::move(run.recomputations);
  out.report = {{"heuristic", to_string(o_.heuristic)},
                {"budget_bytes", budget},
                {"planned_peak_bytes", run.peak_bytes},
                {"limit_met", run.shortfall_bytes == 0},
                {"shortfall_bytes", run.shortfall_bytes},
                {"evictions", run.evictions},
                {"recomputations", out.plan.recomputations.size()},
                {"replayed_ops", run.replayed_ops},
                {"recompute_ms", static_cast<double>(run.recompute_ns) / 1e6}};
  return out;
}

}  // namespace dlsim
