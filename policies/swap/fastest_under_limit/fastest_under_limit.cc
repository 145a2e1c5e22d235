#include "policies/swap/fastest_under_limit/fastest_under_limit.h"

#include <algorithm>

#include "policies/swap/fastest_under_limit/absence_search.h"
#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/singa/singa_swap.h"
#include "policies/swap/core/swap_timeline.h"
#include "policies/swap/vdnn/vdnn_swap.h"

namespace dlsim {

const ParamBindings<FastestUnderLimitOptions>& FastestUnderLimitOptions::parameters() {
  using O = FastestUnderLimitOptions;
  static const auto b = ParamBindings<O>()
      .add("min_bytes", &O::min_bytes, "smallest tensor considered for swapping", ParamCheck::at_least(0))
      .add("simulations", &O::simulations, "plans the simulator judges at most, best estimates first",
           ParamCheck::in_range(1, 100))
      .add("baselines", &O::baselines, "judge SINGA's and vDNN's plans at the same limit beside our own")
      .add_all(&O::limit, MemoryLimit::parameters());
  return b;
}

namespace {

uint64_t planned_peak(const SwapContext& ctx, const ProgramLoad& load, const SwapPlan& plan) {
  return load.peak_with(plan, ctx.schedule.stream_of);
}

}  // namespace

SwapResult FastestUnderLimit::plan(const SwapContext& ctx) {
  SwapResult out;
  const uint64_t limit = o_.limit.resolve(ctx.profile.peak_live_bytes, ctx.device_capacity);
  out.target_bytes = limit;
  const ProgramLoad load(ctx.graph, ctx.schedule.order);
  if (load.peak() <= limit) {
    out.report = {{"winner", "no swap needed"}, {"candidates", 0}};
    return out;
  }
  const CopyTimeLine copy = copy_time_from_link(ctx.link);
  AbsenceSearch s(ctx, load, copy, limit, o_.min_bytes);

  struct Entry {
    std::string name;
    SwapPlan plan;
    TimeNs estimate;
    TimeNs simulated = -1;
  };
  std::vector<Entry> entries;
  auto add = [&](const std::string& name, const SwapPlan& plan) {
    if (planned_peak(ctx, load, plan) > limit) return;
    entries.push_back({name, plan, TimeNs{0}});
  };
  for (CoverRule rule : {CoverRule::LongestSlack, CoverRule::LeastTransfer}) {
    auto chosen = s.cover(rule, {}, {});
    if (!s.met(chosen)) {  // out of reach: the best this can do, reported as a miss
      out.plan = s.to_plan(chosen);
      out.report = {{"winner", "cover (limit out of reach)"}, {"candidates", s.gaps().size()}};
      return out;
    }
    s.relax(chosen);
    chosen = s.improve(rule, chosen, 40);
    add(rule == CoverRule::LongestSlack ? "cover: longest slack" : "cover: least transfer", s.to_plan(chosen));
  }
  if (o_.baselines) {
    SingaOptions so;  // SINGA's defaults (majority vote, its fitted copy line) at our limit
    so.limit.bytes = limit;
    so.mode = SingaMode::StickToLimit;
    add("singa stick-to-limit", SingaSwap(so).plan(ctx).plan);
    so.mode = SingaMode::NoOverhead;
    add("singa no-overhead", SingaSwap(so).plan(ctx).plan);
    for (bool conv : {false, true}) {
      VdnnOptions vo;
      vo.conv_only = conv;
      add(conv ? "vdnn conv" : "vdnn all", VdnnSwap(vo).plan(ctx).plan);
    }
  }
  for (Entry& e : entries) e.estimate = s.estimate(e.plan).iteration_ns;
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.estimate < b.estimate; });
  // Step 6: the plan estimated best, whoever made it, taken apart into gaps and scheduled and improved as ours.
  if (!entries.empty()) {
    auto chosen = s.cover(CoverRule::LongestSlack, s.from_plan(entries.front().plan), {});
    if (s.met(chosen)) {
      s.relax(chosen);
      chosen = s.improve(CoverRule::LongestSlack, chosen, 40);
      const SwapPlan improved = s.to_plan(chosen);
      if (planned_peak(ctx, load, improved) <= limit)
        entries.insert(entries.begin(), {"rescheduled: " + entries.front().name, improved, s.estimate(improved).iteration_ns});
      std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.estimate < b.estimate; });
    }
  }
  // The simulator judges the plans in order of their estimates, up to the budget; the fastest simulated wins.
  size_t best = 0;
  int simulated = 0;
  for (size_t k = 0; k < entries.size() && ctx.evaluator && simulated < o_.simulations; ++k) {
    entries[k].simulated = ctx.evaluator->evaluate({}, entries[k].plan).iteration_ns;
    ++simulated;
    if (entries[best].simulated < 0 || entries[k].simulated < entries[best].simulated) best = k;
  }
  out.plan = entries[best].plan;
  nlohmann::json judged = nlohmann::json::array();
  for (const Entry& e : entries)
    judged.push_back({{"plan", e.name}, {"estimate_us", static_cast<double>(e.estimate) / 1000.0},
                      {"simulated_us", e.simulated < 0 ? nlohmann::json() : nlohmann::json(static_cast<double>(e.simulated) / 1000.0)}});
  out.report = {{"winner", entries[best].name}, {"candidates", s.gaps().size()}, {"swaps", out.plan.actions.size()},
                {"judged", judged}};
  return out;
}

}  // namespace dlsim
