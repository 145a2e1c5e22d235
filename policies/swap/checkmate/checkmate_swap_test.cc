// Checkmate's MILP on graphs whose optimal recomputation is worked out by hand (the working is beside each
// case), solved by CBC (coinor-cbc, installed by scripts/install-deps.sh).
#include "policies/swap/checkmate/checkmate_swap.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "policies/swap/core/cbc_solver.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/back_to_back_profile.h"
#include "policies/swap/testing/random_remat_graph.h"
#include "policies/swap/testing/remat_graphs.h"
#include "policies/swap/testing/swap_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

SwapResult plan_at(const Graph& g, const std::vector<TimeNs>& ns, int64_t limit_bytes, const std::string& solve = "milp",
                   bool swap = false) {
  const Schedule s = serial_schedule_of(g);
  const IterationProfile prof = profile_of(g, s, ns);
  TestLink link;
  SwapContext ctx{g, s, prof, link, uint64_t{1} << 40, nullptr};
  Params p(CheckmateOptions::parameters().specs());
  CheckmateOptions o = CheckmateOptions::parameters().from_params(p);
  o.limit.bytes = static_cast<uint64_t>(limit_bytes);
  o.lp_rounding = solve == "lp-rounding";
  o.swap = swap;
  o.compare_baselines = false;  // the MILP's own plan (checkmate_baselines_test.cc sets it beside the others')
  return CheckmateSwap(o).plan(ctx);
}

struct Plan {  // one recomputation, as the tests expect it
  int before;
  std::vector<std::string> ops;
  std::vector<std::pair<std::string, int>> drops;  // tensor, free_after
};
std::vector<Plan> readable(const Graph& g, const SwapPlan& plan) {
  std::vector<Plan> out;
  for (const Recomputation& r : plan.recomputations) {
    Plan p{r.before, {}, {}};
    for (OpId o : r.ops) p.ops.push_back(g.op(o).name);
    for (const auto& d : r.drops) p.drops.push_back({g.tensor(d.tensor).name, d.free_after});
    out.push_back(p);
  }
  return out;
}

}  // namespace

TEST_CASE("checkmate on a chain: the one recomputation that fits the budget, and none when it cannot fit") {
  // pos 0 A: x -> a (100 kB, 3 us)  pos 3 Cb: b -> g2 (10 kB)
  // pos 1 B: a -> b (100 kB)        pos 4 Bb: (a, g2) -> g1
  // pos 2 C: b -> c (10 kB)         pos 5 Ab: (x, g1) -> g0
  // Without recomputation: 211 kB during C (x 1k, a, b, c) and during Cb (x, a, b, g2). Budget 205 kB: a cannot be
  // in memory in stages 2 and 3, so it goes after B (stage 1, its last holder) and A runs again before Bb (stage 4):
  // one re-run of A, 3 us. B itself needs x, a and b at once (201 kB): 200 kB is below what any plan reaches.
  const CheckmateChain chain;  // remat_graphs.h
  const Graph& g = chain.g;
  const std::vector<TimeNs>& ns = chain.ns;

  const SwapResult r = plan_at(g, ns, 205000);
  CHECK(r.report["status"] == "optimal");
  CHECK(r.report["proved_optimal"] == true);
  CHECK(r.report["objective_us"].get<double>() == Approx(3.0));
  const std::vector<Plan> got = readable(g, r.plan);
  REQUIRE(got.size() == 1);
  CHECK(got[0].before == 4);
  CHECK(got[0].ops == std::vector<std::string>{"A"});
  CHECK(got[0].drops == std::vector<std::pair<std::string, int>>{{"a", 1}});
  const Schedule s = serial_schedule_of(g);
  CHECK(ProgramLoad(g, s.order).peak_with(r.plan, s.stream_of) == 201000);

  const SwapResult none = plan_at(g, ns, 200000);  // below the 201 kB B needs
  CHECK(none.report["status"] == "infeasible");
  CHECK(none.plan.empty());
  CHECK(none.target_bytes == 200000);

  const SwapResult loose = plan_at(g, ns, 300000);  // everything fits: nothing to re-run
  CHECK(loose.report["status"] == "optimal");
  CHECK(loose.plan.empty());
}

TEST_CASE("checkmate on a diamond re-runs the cheaper branch") {
  // pos 0 A: x -> a (10k)        pos 5 Eb: e -> ge
  // pos 1 B: a -> b (100k, 5 us) pos 6 Cb: (c, ge) -> gc
  // pos 2 C: a -> c (100k, 2 us) pos 7 Bb: (b, gc) -> gb
  // pos 3 D: (b, c) -> d (1k)    pos 8 Ab: (x, a, gb) -> g0
  // pos 4 E: d -> e (50k)
  // Stages 4 and 5 hold x, a, b, c and e (262 kB with d or ge); at 220 kB one branch must go. Dropping c and
  // re-running C before Cb costs 2 us (stage 6: 213 kB); dropping b costs B's 5 us. The optimum drops c after D.
  Graph g;
  const TensorId x = add_tensor(g, "x", 1000), a = add_tensor(g, "a", 10000), b = add_tensor(g, "b", 100000),
                 c = add_tensor(g, "c", 100000), d = add_tensor(g, "d", 1000), e = add_tensor(g, "e", 50000),
                 ge = add_tensor(g, "ge", 1000), gc = add_tensor(g, "gc", 1000), gb = add_tensor(g, "gb", 1000),
                 g0 = add_tensor(g, "g0", 1000);
  add_op(g, "A", {x}, {a});
  add_op(g, "B", {a}, {b});
  add_op(g, "C", {a}, {c});
  add_op(g, "D", {b, c}, {d});
  add_op(g, "E", {d}, {e});
  add_op(g, "Eb", {e}, {ge}, Phase::Backward);
  add_op(g, "Cb", {c, ge}, {gc}, Phase::Backward);
  add_op(g, "Bb", {b, gc}, {gb}, Phase::Backward);
  add_op(g, "Ab", {x, a, gb}, {g0}, Phase::Backward);
  const std::vector<TimeNs> ns = {1000, 5000, 2000, 1000, 1000, 1000, 1000, 1000, 1000};
  const SwapResult r = plan_at(g, ns, 220000);
  CHECK(r.report["status"] == "optimal");
  CHECK(r.report["objective_us"].get<double>() == Approx(2.0));
  const std::vector<Plan> got = readable(g, r.plan);
  REQUIRE(got.size() == 1);
  CHECK(got[0].before == 6);
  CHECK(got[0].ops == std::vector<std::string>{"C"});
  CHECK(got[0].drops == std::vector<std::pair<std::string, int>>{{"c", 3}});
  const Schedule s = serial_schedule_of(g);
  CHECK(ProgramLoad(g, s.order).peak_with(r.plan, s.stream_of) <= 220000);

  // The LP rounding finds a plan too; it may cost more than the optimum, never less.
  const SwapResult lp = plan_at(g, ns, 220000, "lp-rounding");
  CHECK(lp.report["mode"] == "lp-rounding");
  CHECK(ProgramLoad(g, s.order).peak_with(lp.plan, s.stream_of) <= 220000);
  CHECK(lp.report["objective_us"].get<double>() >= 2.0 - 1e-9);
}

TEST_CASE("checkmate with swap: true copies a value to the host when the copies hide behind the ops, else re-runs") {
  // pos 0 A: x -> a (100 kB)   pos 3 Cb: c -> g2 (1 kB)
  // pos 1 B: a -> b (100 kB)   pos 4 Bb: (b, g2) -> g1
  // pos 2 C: b -> c (100 kB)   pos 5 Ab: (x, a, g1) -> g0
  // Without saving, stage 2 holds x, a, b, c (301 kB). At 210 kB, a cannot be in memory in stages 2 and 3 (b and c
  // are, 201 kB and 202 kB), but can in stage 4 (x, b, g2, g1: 103 kB + a = 203 kB). So a leaves after B and is
  // either copied back during stage 4 (the test link: 110 us out, 60 us back) or made again by A before Ab.
  // A 500 us, the others 200 us: the copy out hides behind A or B, the copy back behind Bb; re-running A costs
  // 500 us. So the optimum copies (0 us beyond the ops); without copies it re-runs A (500 us).
  // A 20 us, Bb 30 us: the copy back stalls stage 4 for 30 us, re-running A costs 20 us: it re-runs.
  Graph g;
  const TensorId x = add_tensor(g, "x", 1000), a = add_tensor(g, "a", 100000), b = add_tensor(g, "b", 100000),
                 c = add_tensor(g, "c", 100000), g2 = add_tensor(g, "g2", 1000), g1 = add_tensor(g, "g1", 1000),
                 g0 = add_tensor(g, "g0", 1000);
  const OpId A = add_op(g, "A", {x}, {a});
  const OpId B = add_op(g, "B", {a}, {b});
  const OpId C = add_op(g, "C", {b}, {c});
  add_op(g, "Cb", {c}, {g2}, Phase::Backward, C);
  add_op(g, "Bb", {b, g2}, {g1}, Phase::Backward, B);
  add_op(g, "Ab", {x, a, g1}, {g0}, Phase::Backward, A);
  const Schedule s = serial_schedule_of(g);
  const ProgramLoad load(g, s.order);
  REQUIRE(load.peak() == 302000);

  const std::vector<TimeNs> slow_a = {500000, 200000, 200000, 200000, 200000, 200000};
  const SwapResult sw = plan_at(g, slow_a, 210000, "milp", true);
  CHECK(sw.report["status"] == "optimal");
  CHECK(sw.report["swap"] == true);
  CHECK(sw.report["objective_us"].get<double>() == Approx(0.0).margin(1e-6));
  CHECK(sw.report["copies_to_host"] == 1);
  CHECK(sw.report["copies_back"] == 1);
  CHECK(sw.plan.recomputations.empty());
  REQUIRE(sw.plan.copies.size() == 1);
  CHECK(sw.plan.copies[0].tensor == a);
  CHECK(sw.plan.copies[0].to_host);
  CHECK(sw.plan.copies[0].pos == 0);  // after A, its only writer
  REQUIRE(sw.plan.actions.size() == 1);
  const SwapAction& act = sw.plan.actions[0];
  CHECK(act.tensor == a);
  CHECK_FALSE(act.copy_out);  // the extra copy made it
  CHECK(act.out_after == 1);
  CHECK(act.free_after == 1);
  CHECK(act.in_issue_after == 3);  // the copy runs in stage 4
  CHECK(act.in_needed_by == 5);
  CHECK(load.peak_with(sw.plan, s.stream_of) <= 210000);

  const SwapResult rc = plan_at(g, slow_a, 210000, "milp", false);  // the same budget without copies
  CHECK(rc.report["objective_us"].get<double>() == Approx(500.0));
  const std::vector<Plan> rerun = readable(g, rc.plan);
  REQUIRE(rerun.size() == 1);
  CHECK(rerun[0].before == 5);
  CHECK(rerun[0].ops == std::vector<std::string>{"A"});

  const std::vector<TimeNs> cheap_a = {20000, 200000, 200000, 200000, 30000, 200000};
  const SwapResult mixed = plan_at(g, cheap_a, 210000, "milp", true);
  CHECK(mixed.report["status"] == "optimal");
  CHECK(mixed.report["objective_us"].get<double>() == Approx(20.0));
  CHECK(mixed.plan.actions.empty());
  const std::vector<Plan> got = readable(g, mixed.plan);
  REQUIRE(got.size() == 1);
  CHECK(got[0].ops == std::vector<std::string>{"A"});
  CHECK(got[0].drops == std::vector<std::pair<std::string, int>>{{"a", 1}});
}

TEST_CASE("checkmate: swap: true with lp-rounding is an error naming the key") {
  Params p(CheckmateOptions::parameters().specs());
  p.set("swap", true);
  p.set("solve", std::string("lp-rounding"));
  CHECK_THROWS_WITH(CheckmateOptions::parameters().from_params(p), Catch::Contains("solve: milp"));
}

TEST_CASE("checkmate: a graph above max_ops is an error naming the parameter with coarsen: never, else coarsened") {
  Graph g;
  const TensorId x = add_tensor(g, "x", 1000), y = add_tensor(g, "y", 1000);
  add_op(g, "A", {x}, {y});
  add_op(g, "B", {y}, {});
  const Schedule s = serial_schedule_of(g);
  const IterationProfile prof = profile_of(g, s, {1000, 1000});
  TestLink link;
  SwapContext ctx{g, s, prof, link, uint64_t{1} << 40, nullptr};
  CheckmateOptions o;
  o.max_ops = 1;
  o.coarsen = CheckmateCoarsen::Never;
  CHECK_THROWS_WITH(CheckmateSwap(o).plan(ctx), Catch::Contains("above max_ops 1"));
  o.coarsen = CheckmateCoarsen::Auto;
  o.compare_baselines = false;
  const SwapResult r = CheckmateSwap(o).plan(ctx);  // the limit is the device: nothing to plan
  CHECK(r.report["coarse"]["chunks"] == 2);
  CHECK(r.report["solver"] == "none");
  o.swap = true;
  CHECK_THROWS_WITH(CheckmateSwap(o).plan(ctx), Catch::Contains("swap: true is solved on the op-level graph only"));
}

// A plan is only as good as its promise: on random forward/backward graphs (testing/random_remat_graph.h), every
// plan CBC returns, with copies and without, peaks within the budget it was solved for by ProgramLoad's count, the
// count the simulated run matches (experiment/swap_zoo_test.cc). 250 graphs at four budgets (894 plans, 323 with copies)
// passed once; CI runs 16.
TEST_CASE("checkmate's plans on random graphs stay within their budget, with copies and without") {
  int solved = 0, with_copies = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const RandomRematGraph rg(seed);
    const Schedule s = serial_schedule_of(rg.g);
    const ProgramLoad load(rg.g, s.order);
    for (double f : {0.8, 0.6, 0.45}) {
      const auto budget = static_cast<int64_t>(static_cast<double>(load.peak()) * f);
      for (bool swap : {false, true}) {
        INFO("seed " << seed << " budget " << budget << " swap " << swap);
        const SwapResult r = plan_at(rg.g, rg.op_ns, budget, "milp", swap);
        if (r.report["status"] == "infeasible" || r.report.contains("fallback") || r.report.contains("note")) continue;
        ++solved;
        if (!r.plan.actions.empty()) ++with_copies;
        CHECK(load.peak_with(r.plan, s.stream_of) <= static_cast<uint64_t>(budget));
      }
    }
  }
  CHECK(solved > 40);
  CHECK(with_copies > 5);
}
