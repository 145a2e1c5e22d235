// DTR's bounds on its own work: a budget below what any schedule holds is detected and reported (and the plan
// aims at that least instead of thrashing), the replay cap stops evictions, and full's cached scores are the
// scores walked every time.
#include <catch2/catch.hpp>

#include "policies/swap/core/program_load.h"
#include "policies/swap/dtr/dtr_runtime.h"
#include "policies/swap/dtr/dtr_swap.h"
#include "policies/swap/testing/back_to_back_profile.h"
#include "policies/swap/testing/random_remat_graph.h"
#include "policies/swap/testing/remat_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// A chain of n layers and its backward pass, as Chain4 but long: every activation and gradient 1 MiB, each op 1 ms.
struct LongChain {
  Graph g;
  Schedule schedule;
  IterationProfile profile;
  explicit LongChain(int n) {
    const TensorId w = add_tensor(g, "w", 0, true);
    std::vector<TensorId> a;
    std::vector<OpId> f;
    TensorId prev = w;
    for (int i = 0; i < n; ++i) {
      a.push_back(add_tensor(g, "a" + std::to_string(i), kMiB));
      f.push_back(add_op(g, "f" + std::to_string(i), {prev}, {a.back()}));
      prev = a.back();
    }
    TensorId grad = add_tensor(g, "g" + std::to_string(n), kMiB);
    add_op(g, "loss", {prev}, {grad}, Phase::Backward, f.back());
    for (int i = n - 1; i >= 1; --i) {
      const TensorId gi = add_tensor(g, "g" + std::to_string(i), kMiB);
      add_op(g, "b" + std::to_string(i), {grad, a[static_cast<size_t>(i) - 1]}, {gi}, Phase::Backward, f[static_cast<size_t>(i)]);
      grad = gi;
    }
    schedule = serial_schedule_of(g);
    profile = profile_of(g, schedule, std::vector<TimeNs>(g.ops().size(), kMs));
  }
};

SwapResult dtr(const Graph& g, const Schedule& s, const IterationProfile& prof, const std::string& heuristic,
               uint64_t limit_bytes, int64_t max_replays_per_op = 20) {
  Params p(DtrOptions::parameters().specs());
  p.set("heuristic", heuristic);
  p.set("max_replays_per_op", max_replays_per_op);
  DtrOptions o = DtrOptions::parameters().from_params(p);
  o.limit.bytes = limit_bytes;
  return DtrSwap(o).plan({g, s, prof, TestLink(), uint64_t{1} << 40, nullptr});
}

bool same_plan(const SwapPlan& a, const SwapPlan& b) {
  if (a.recomputations.size() != b.recomputations.size()) return false;
  for (size_t i = 0; i < a.recomputations.size(); ++i) {
    const Recomputation &x = a.recomputations[i], &y = b.recomputations[i];
    if (x.before != y.before || x.ops != y.ops || x.drops.size() != y.drops.size()) return false;
    for (size_t d = 0; d < x.drops.size(); ++d)
      if (x.drops[d].tensor != y.drops[d].tensor || x.drops[d].free_after != y.drops[d].free_after) return false;
  }
  return true;
}

}  // namespace

// Chain4's least: b3 (position 5) holds g4 and g3 (backward outputs: nothing recomputes them) and its input a3,
// 3 MiB; every other op needs at most that.
TEST_CASE("least_step_bytes: persistent, unrecomputable and the op's own tensors, at the worst op") {
  const Chain4 m;
  const RematGraph rg(m.g, m.schedule.order, m.profile);
  const LeastStepBytes least = least_step_bytes(rg);
  CHECK(least.bytes == 3 * kMiB);
  CHECK(least.position == 5);
}

TEST_CASE("a dtr budget below the least any schedule holds is reported, and planned as that least") {
  const Chain4 m;
  for (const char* h : {"full", "eq", "local"}) {
    INFO(h);
    const SwapResult low = dtr(m.g, m.schedule, m.profile, h, 2 * kMiB);
    const SwapResult at_least = dtr(m.g, m.schedule, m.profile, h, 3 * kMiB);
    CHECK(low.report["budget_reachable"] == false);
    CHECK(low.report["least_bytes"] == 3 * kMiB);
    CHECK(low.report["note"].get<std::string>().find("op b3") != std::string::npos);
    CHECK(low.report["limit_met"] == false);
    CHECK(low.report["shortfall_bytes"].get<uint64_t>() == low.report["planned_peak_bytes"].get<uint64_t>() - 2 * kMiB);
    CHECK(same_plan(low.plan, at_least.plan));  // no eviction below what no schedule can go under
    CHECK_FALSE(at_least.report.contains("budget_reachable"));  // said only when out of reach
  }
}

// 300 layers (600 ops), the budget at the least: forward activations go and come back by chains of replays. The
// uncapped pass replays 3,925 ops (6.5 per op); capped at 1 per op (600) it stops evicting at op 345, keeps what
// it recomputes from then on, and ends at 1,096.
TEST_CASE("the replay cap stops dtr's evictions and says so") {
  const LongChain c(300);
  const RematGraph rg(c.g, c.schedule.order, c.profile);
  const uint64_t least = least_step_bytes(rg).bytes;
  const SwapResult free_run = dtr(c.g, c.schedule, c.profile, "eq", least, 0);
  const SwapResult capped = dtr(c.g, c.schedule, c.profile, "eq", least, 1);
  const auto positions = static_cast<int64_t>(c.schedule.order.size());
  CHECK_FALSE(free_run.report.contains("replay_cap_reached"));
  CHECK(free_run.report["replayed_ops"].get<int64_t>() > 5 * positions);
  CHECK(capped.report["replay_cap_reached"] == true);
  CHECK(capped.report["evictions_stopped_at"].get<int>() > 0);
  CHECK(capped.report["limit_met"] == false);
  CHECK(capped.report["replayed_ops"].get<int64_t>() < 2 * positions);
  // The plan stays a plan: the live bytes it makes are the ones it reports.
  CHECK(peak_of(live_bytes_with(c.g, c.schedule.order, capped.plan)) ==
        capped.report["planned_peak_bytes"].get<uint64_t>());
}

TEST_CASE("full's cached scores give the plans of scores walked every time") {
  auto both = [](const Graph& g, const Schedule& s, const IterationProfile& prof, uint64_t budget) {
    const RematGraph rg(g, s.order, prof);
    DtrLimits cached, walked;
    walked.cache_full_scores = false;
    const DtrRun a = run_dtr(rg, budget, DtrHeuristicKind::Full, cached);
    const DtrRun b = run_dtr(rg, budget, DtrHeuristicKind::Full, walked);
    SwapPlan pa, pb;
    pa.recomputations = a.recomputations;
    pb.recomputations = b.recomputations;
    CHECK(same_plan(pa, pb));
    CHECK(a.evictions == b.evictions);
    CHECK(a.peak_bytes == b.peak_bytes);
    return a.evictions;
  };
  int evictions = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    const IterationProfile prof = profile_of(rg.g, s, rg.op_ns);
    for (double f : {0.9, 0.7, 0.5, 0.3}) {
      INFO("seed " << seed << " fraction " << f);
      evictions += both(rg.g, s, prof, static_cast<uint64_t>(static_cast<double>(prof.peak_live_bytes) * f));
    }
  }
  const LongChain c(120);
  const RematGraph crg(c.g, c.schedule.order, c.profile);
  const uint64_t least = least_step_bytes(crg).bytes;
  for (uint64_t budget : {least, least + 4 * kMiB, least + 16 * kMiB}) evictions += both(c.g, c.schedule, c.profile, budget);
  CHECK(evictions > 500);  // the comparison saw real work
}
