#include "policies/swap/checkmate/checkmate_baselines.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "policies/swap/capuchin/capuchin_swap.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/dtr/dtr_swap.h"

namespace dlsim {

namespace {

struct BaselineCandidate {
  std::string policy;
  SwapResult result;
  uint64_t peak = 0;
  bool fits = false;
  bool timed = false;
  double iteration_us = 0;
  std::string skipped;  // why it has no plan (a model without blocks for checkpoint)
};

// The iteration without the simulator: the profile's, plus each re-run op's profiled time.
bool profile_time_us(const SwapContext& ctx, const SwapPlan& plan, double& us) {
  if (plan.copies_data()) return false;
  std::vector<TimeNs> op_ns(ctx.graph.ops().size(), 0);
  for (size_t i = 0; i < ctx.profile.order.size() && i < ctx.profile.op_end.size(); ++i)
    op_ns[static_cast<size_t>(ctx.profile.order[i])] = ctx.profile.op_end[i] - ctx.profile.op_start[i];
  TimeNs ns = ctx.profile.iteration_ns;
  for (const Recomputation& r : plan.recomputations)
    for (OpId o : r.ops) ns += op_ns[static_cast<size_t>(o)];
  us = static_cast<double>(ns) / 1000.0;
  return true;
}

void judge(const SwapContext& ctx, uint64_t budget, BaselineCandidate& c) {
  const std::vector<OpId>& order = c.result.order.empty() ? ctx.schedule.order : c.result.order;
  c.peak = ProgramLoad(ctx.graph, order).peak_with(c.result.plan, ctx.schedule.stream_of);
  c.fits = c.peak <= budget;
  if (ctx.evaluator) {
    try {
      c.iteration_us = static_cast<double>(ctx.evaluator->evaluate(c.result.order, c.result.plan).iteration_ns) / 1000.0;
      c.timed = true;
    } catch (const std::invalid_argument& x) {  // the lowering refuses the plan (FSDP: a replay before its regather)
      c.skipped = std::string("not runnable here: ") + x.what();
    }
  } else {
    c.timed = profile_time_us(ctx, c.result.plan, c.iteration_us);
  }
}

bool better(const BaselineCandidate& a, const BaselineCandidate& b) {
  if (a.fits != b.fits) return a.fits;
  if (a.fits) return a.iteration_us < b.iteration_us;
  return a.peak < b.peak || (a.peak == b.peak && a.iteration_us < b.iteration_us);
}

nlohmann::json candidate_json(const BaselineCandidate& c) {
  nlohmann::json j = {{"policy", c.policy}};
  if (!c.skipped.empty()) {
    j["skipped"] = c.skipped;
    return j;
  }
  j["peak_bytes"] = c.peak;
  j["fits"] = c.fits;
  if (c.timed) j["iteration_us"] = c.iteration_us;
  else j["not_timed"] = "no simulator at hand, and the plan copies: its time is not known from the profile";
  return j;
}

}  // namespace

void keep_the_best_of_baselines(const SwapContext& ctx, uint64_t budget, SwapResult& checkmate) {
  std::vector<BaselineCandidate> cands;
  auto add = [&](const std::string& name, SwapPolicy&& policy) {
    BaselineCandidate c;
    c.policy = name;
    try {
      c.result = policy.plan(ctx);
    } catch (const ConfigError& e) {  // checkpoint on a model without blocks
      c.skipped = e.what();
    }
    cands.push_back(std::move(c));
  };
  DtrOptions dtr;
  dtr.limit.bytes = budget;
  add("dtr", DtrSwap(dtr));
  CapuchinOptions capuchin;
  capuchin.limit.bytes = budget;
  add("capuchin", CapuchinSwap(capuchin));
  for (int64_t every : {1, 2}) {
    CheckpointOptions cp;
    cp.every = every;
    add("checkpoint every " + std::to_string(every), CheckpointSwap(cp));
  }
  add("sqrt", SqrtCheckpointSwap());

  BaselineCandidate own;
  own.policy = "checkmate";
  own.result.plan = checkmate.plan;
  own.result.order = checkmate.order;
  judge(ctx, budget, own);
  const BaselineCandidate* best = nullptr;
  nlohmann::json listed = nlohmann::json::array();
  for (BaselineCandidate& c : cands) {
    if (c.skipped.empty()) judge(ctx, budget, c);
    listed.push_back(candidate_json(c));
    if (c.skipped.empty() && c.timed && own.timed && better(c, best ? *best : own)) best = &c;
  }
  checkmate.report["checkmate_plan"] = candidate_json(own);
  checkmate.report["baselines"] = listed;
  if (!best) return;
  checkmate.report["baseline_chosen"] = best->policy;
  checkmate.report["baseline_reason"] =
      best->fits && !own.fits ? "checkmate's plan misses the budget and this one meets it"
      : best->fits            ? "both meet the budget and this one is faster"
                              : "no plan meets the budget and this one peaks lowest";
  checkmate.plan = best->result.plan;
  checkmate.order = best->result.order;
}

}  // namespace dlsim
