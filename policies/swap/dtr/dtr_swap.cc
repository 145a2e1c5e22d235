#include "policies/swap/dtr/dtr_swap.h"

#include "policies/swap/dtr/dtr_runtime.h"

namespace dlsim {

std::vector<ParamSpec> DtrOptions::specs() {
  std::vector<ParamSpec> s = {
      {"heuristic", ParamType::String, std::string("eq"),
       "eviction score c/(m*s) with c: full (the evicted neighbourhood's cost, the paper's h_DTR), eq (its "
       "equivalence-class approximation, used by the paper's PyTorch prototype) or local (the tensor's own cost)",
       ParamCheck::one_of({"full", "eq", "local"})},
  };
  for (ParamSpec& p : MemoryLimit::specs()) s.push_back(std::move(p));
  return s;
}

DtrOptions DtrOptions::from_params(const Params& p) {
  DtrOptions o;
  o.heuristic = dtr_heuristic_from_string(p.get_string("heuristic"));
  o.limit = MemoryLimit::from_params(p);
  return o;
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
