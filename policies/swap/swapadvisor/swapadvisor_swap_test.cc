// SwapAdvisor's planner on a hand-made iteration (testing/swap_graphs.h: NestedAbsences) where Belady's rule
// can be followed by hand, and its genetic search without a simulator (fitness: fewest swaps).
#include "policies/swap/swapadvisor/swapadvisor_swap.h"

#include <catch2/catch.hpp>

#include "policies/swap/core/program_load.h"
#include "policies/swap/swapadvisor/swapadvisor_selection.h"
#include "policies/swap/testing/swap_graphs.h"
#include "workloads/zoo.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("SwapAdvisor's planner: slots per size class, the furthest next use evicted, early swap-in") {
  NestedAbsences m;
  const ProgramLoad load(m.g, m.schedule.order);
  // One class for every tensor of at least 1 MiB (t1, t2, t3, s), its slot as large as the largest (16 MiB);
  // w (256 KiB) is unmanaged.
  const SizeClasses sc = size_classes(m.g, load, kMiB, 1);
  REQUIRE(sc.slot_bytes == std::vector<uint64_t>{16 * kMiB});
  CHECK(sc.peak_resident == std::vector<int>{4});  // t1, t2, t3 and s at D
  CHECK(sc.least_slots == std::vector<int>{2});    // E reads t3 and s
  CHECK(sc.unmanaged_peak == kMiB / 4);
  // Two slots: C needs t3 with t1 and t2 resident: t1 (next use 12) goes before t2 (11); D needs s with t2 and
  // t3 resident: t2 (11) goes before t3 (10). After E both its tensors die: two free slots take t2 then t1.
  const SlotPlan sp = plan_with_slots(m.g, m.schedule.order, sc, {2}, 33 * kMiB);
  REQUIRE(sp.feasible);
  REQUIRE(sp.plan.actions.size() == 2);
  const SwapAction& t1 = sp.plan.actions[0];
  CHECK(t1.tensor == m.t1);
  CHECK(t1.out_after == 0);
  CHECK(t1.free_after == 1);
  CHECK(t1.in_issue_after == 10);
  CHECK(t1.in_needed_by == 12);
  const SwapAction& t2 = sp.plan.actions[1];
  CHECK(t2.tensor == m.t2);
  CHECK(t2.out_after == 1);
  CHECK(t2.free_after == 5);
  CHECK(t2.in_issue_after == 10);
  CHECK(t2.in_needed_by == 11);
  // one slot cannot hold what E needs at once; two slots of 16 MiB do not fit in 32 MiB beside w
  CHECK_FALSE(plan_with_slots(m.g, m.schedule.order, sc, {1}, 33 * kMiB).feasible);
  CHECK_FALSE(plan_with_slots(m.g, m.schedule.order, sc, {2}, 32 * kMiB).feasible);
}

TEST_CASE("SwapAdvisor's eviction passes over a persistent tensor not used yet in the iteration") {
  // One class of 1 MiB tensors, two slots: W (persistent) holds one from the start, A's a1 the other. B needs a
  // slot for a2; W and a1 are both next used by D, and W comes first among the residents, but W has not been
  // used yet in this iteration, and an absence runs between two uses: it stays, and a1 goes out after A and
  // comes back for D.
  //   pos 0: A -> a1;  1: B -> a2;  2: C reads a2;  3: D reads W, a1
  Graph g;
  const TensorId w = add_tensor(g, "W", kMiB, true);
  const TensorId a1 = add_tensor(g, "a1", kMiB), a2 = add_tensor(g, "a2", kMiB);
  add_op(g, "A", {}, {a1});
  add_op(g, "B", {}, {a2});
  add_op(g, "C", {a2}, {});
  add_op(g, "D", {w, a1}, {});
  const Schedule sched = serial_schedule_of(g);
  const ProgramLoad load(g, sched.order);
  const SizeClasses sc = size_classes(g, load, kMiB, 1);
  const SlotPlan sp = plan_with_slots(g, sched.order, sc, {2}, 4 * kMiB);
  REQUIRE(sp.feasible);
  REQUIRE(sp.plan.actions.size() == 1);
  const SwapAction& a = sp.plan.actions[0];
  CHECK(a.tensor == a1);
  CHECK(a.out_after == 0);
  CHECK(a.free_after == 0);
  CHECK(a.in_needed_by == 3);
}

TEST_CASE("SwapAdvisor's size classes cost memory: here no split goes below the peak that other plans beat") {
  // E needs t3 (16 MiB) and s (8 MiB) at once: two slots of 16 MiB in one class, or one slot in each of their
  // own classes plus one per other class: 30.25 MiB at least, where freeing t1 and t2 alone gives 24.25.
  NestedAbsences m;
  for (int64_t classes : {1, 2, 3, 4}) {
    Params p(SwapAdvisorOptions::parameters().specs());
    p.set("limit_mb", int64_t{29});
    p.set("size_classes", classes);
    const SwapResult r = SwapAdvisorSwap(SwapAdvisorOptions::parameters().from_params(p)).plan({m.g, m.schedule, m.profile, TestLink(), 1 << 30, nullptr});
    INFO(classes << " classes");
    CHECK(r.report["feasible"] == false);
    CHECK(r.plan.empty());
  }
}

TEST_CASE("SwapAdvisor's search meets the limit on SINGA's CIFAR VGG-16 and is deterministic for a seed") {
  ModelOptions mo;
  mo.batch = 100;
  const Graph g = build_training_graph("cifar-vgg16", mo);
  const Schedule sched = serial_schedule_of(g);
  IterationProfile prof;  // 1 us per op: without a simulator only the number of swaps counts
  prof.order = sched.order;
  for (size_t i = 0; i < sched.order.size(); ++i) {
    prof.op_start.push_back(static_cast<TimeNs>(i) * 1000);
    prof.op_end.push_back(static_cast<TimeNs>(i + 1) * 1000);
  }
  const ProgramLoad base(g, sched.order);
  prof.peak_live_bytes = base.peak();
  prof.iteration_ns = static_cast<TimeNs>(sched.order.size()) * 1000;
  Params p(SwapAdvisorOptions::parameters().specs());
  p.set("limit_fraction", 0.7);
  auto run = [&] {
    return SwapAdvisorSwap(SwapAdvisorOptions::parameters().from_params(p)).plan({g, sched, prof, TestLink(), 1ull << 40, nullptr});
  };
  const SwapResult a = run(), b = run();
  REQUIRE(a.report["feasible"] == true);
  CHECK(a.plan.actions.size() > 0);
  const std::vector<OpId>& order = a.order.empty() ? sched.order : a.order;
  CHECK(ProgramLoad(g, order).peak_with(a.plan, sched.stream_of) <= a.target_bytes);
  CHECK(a.target_bytes == static_cast<uint64_t>(0.7 * static_cast<double>(base.peak())));
  CHECK(a.report == b.report);
  CHECK(a.order == b.order);
}
