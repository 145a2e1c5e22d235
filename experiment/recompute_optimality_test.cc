// Checkmate's optimum against the heuristics at the same budget: where CBC proves optimality, no heuristic's
// recomputation plan that fits the same budget re-runs less (in the profile's op times, the MILP's objective).
#include <catch2/catch.hpp>

#include <cmath>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "experiment/swap_planning.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"

using namespace dlsim;

namespace {

struct Setting {
  Experiment e;
  PreparedExperiment p;
  IterationProfile profile;
};

Setting setting(const std::string& model, int batch) {
  const std::string yaml = "{model: " + model + ", batch: " + std::to_string(batch) +
                           ", hw: h100-sxm, pool: pytorch-caching, concurrency: serial, iterations: 2, swap: none}";
  Setting s{experiment_from_yaml(YAML::Load(yaml), "test.yaml"), {}, {}};
  s.p = prepare_experiment(s.e);
  s.profile = profile_without_swaps(s.e, s.p.graph, s.p.schedule, s.p.hw);
  return s;
}

SwapResult plan(const Setting& s, const std::string& swap_yaml) {
  const Experiment e = experiment_from_yaml(YAML::Load("{model: vgg16, batch: 1, hw: h100-sxm, pool: pytorch-caching, concurrency: serial, "
                                      "swap: " + swap_yaml + "}"), "test.yaml");
  auto policy = swap_registry().create(e.swap.name, e.swap.params);
  const SwapContext ctx{s.p.graph, s.p.schedule, s.profile, *s.p.hw.link, s.p.hw.spec.memory_bytes, nullptr};
  return policy->plan(ctx);
}

// A recomputation plan's re-run time in the profile's op times, and its load peak.
std::pair<double, uint64_t> cost_and_peak(const Setting& s, const SwapPlan& plan) {
  const std::vector<OpId>& order = s.p.schedule.order;
  std::vector<int> pos(order.size());
  for (size_t i = 0; i < order.size(); ++i) pos[static_cast<size_t>(order[i])] = static_cast<int>(i);
  double us = 0;
  for (const Recomputation& r : plan.recomputations)
    for (OpId o : r.ops) {
      const auto i = static_cast<size_t>(pos[static_cast<size_t>(o)]);
      us += static_cast<double>(s.profile.op_end[i] - s.profile.op_start[i]) / 1000.0;
    }
  return {us, ProgramLoad(s.p.graph, order).peak_with(plan, s.p.schedule.stream_of)};
}

}  // namespace

TEST_CASE("checkmate's proved optimum re-runs no more than dtr or sqrt at the budget each of them reaches") {
  const Setting s = setting("vgg16", 32);
  int compared = 0;
  for (const char* heuristic : {"{name: dtr, limit_fraction: 0.9}", "{name: dtr, heuristic: local, limit_fraction: 0.95}",
                                "sqrt"}) {
    const SwapResult h = plan(s, heuristic);
    REQUIRE(h.plan.actions.empty());  // recomputation only: comparable with checkmate's objective
    const auto [h_us, h_peak] = cost_and_peak(s, h.plan);
    INFO(heuristic << ": " << h_us << " us re-run, peak " << h_peak);
    if (h.plan.recomputations.empty()) continue;
    const auto mib = static_cast<int64_t>(std::ceil(static_cast<double>(h_peak) / 1048576.0));
    const SwapResult c =
        plan(s, "{name: checkmate, time_limit_s: 120, compare_baselines: false, limit_mb: " + std::to_string(mib) + "}");
    INFO("checkmate: " << c.report.dump());
    if (c.report["status"] != "optimal") continue;  // the claim holds only where optimality is proved
    ++compared;
    const auto [c_us, c_peak] = cost_and_peak(s, c.plan);
    CHECK(c.report["objective_us"].get<double>() <= h_us + 1e-6);
    CHECK(c_us <= h_us + 1e-6);
    CHECK(c_peak <= static_cast<uint64_t>(mib) << 20);
  }
  CHECK(compared >= 1);
}
