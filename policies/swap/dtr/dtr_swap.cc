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
      .add_all(&O::limit, MemoryLimit::parameters())
      .add("max_replays_per_op", &O::max_replays_per_op,
           "the most replayed ops, per op of the iteration, before evictions stop (the limit is then reported "
           "missed; what was evicted is still brought back); 0 for no cap",
           ParamCheck::in_range(0, 1000000));
  return b;
}

SwapResult DtrSwap::plan(const SwapContext& ctx) {
  const std::vector<OpId>& order = ctx.schedule.order;
  const RematGraph rg(ctx.graph, order, ctx.profile);
  const uint64_t no_swap_peak = ctx.profile.peak_live_bytes > 0 ? ctx.profile.peak_live_bytes : rg.load().peak();
  const uint64_t budget = o_.limit.resolve(no_swap_peak, ctx.device_capacity);
  DtrLimits limits;
  limits.replay_cap = static_cast<int64_t>(o_.max_replays_per_op) * rg.positions();
  DtrRun run = run_dtr(rg, budget, o_.heuristic, limits);
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
  if (run.least.bytes > budget) {  // said only when it matters, so that reports of budgets in reach stay as they were
    out.report["budget_reachable"] = false;
    out.report["least_bytes"] = run.least.bytes;
    out.report["note"] = "the budget is below the least any schedule holds at op " +
                         ctx.graph.op(rg.load().order_at(run.least.position)).name +
                         " (persistent tensors, its inputs and outputs, what cannot be recomputed): the plan aims "
                         "at that least instead";
  }
  if (run.replay_cap_reached) {
    out.report["replay_cap_reached"] = true;
    out.report["evictions_stopped_at"] = run.evictions_stopped_at;
  }
  return out;
}

}  // namespace dlsim
