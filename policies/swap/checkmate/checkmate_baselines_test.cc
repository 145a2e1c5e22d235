// "Never worse than dtr, capuchin or checkpoint at the same budget" (checkmate_baselines.h), on the chain of
// checkmate_swap_test.cc worked by hand there, without a simulator: times are the profile's plus the re-runs'.
#include "policies/swap/checkmate/checkmate_baselines.h"

#include <catch2/catch.hpp>

#include "policies/swap/checkmate/checkmate_swap.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/back_to_back_profile.h"
#include "policies/swap/testing/swap_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// pos 0 A: x -> a (100 kB, 3 us), 1 B: a -> b (100 kB), 2 C: b -> c (10 kB), 3 Cb, 4 Bb (a, g2), 5 Ab (x, g1).
// No saving: 211 kB. At 205 kB the optimum re-runs A before Bb (3 us).
struct ChainForBaselines {
  Graph g;
  Schedule s;
  IterationProfile prof;
  TestLink link;
  ChainForBaselines() {
    const TensorId x = add_tensor(g, "x", 1000), a = add_tensor(g, "a", 100000), b = add_tensor(g, "b", 100000),
                   c = add_tensor(g, "c", 10000), g2 = add_tensor(g, "g2", 10000), g1 = add_tensor(g, "g1", 1000),
                   g0 = add_tensor(g, "g0", 1000);
    const OpId A = add_op(g, "A", {x}, {a});
    const OpId B = add_op(g, "B", {a}, {b});
    const OpId C = add_op(g, "C", {b}, {c});
    add_op(g, "Cb", {b}, {g2}, Phase::Backward, C);
    add_op(g, "Bb", {a, g2}, {g1}, Phase::Backward, B);
    add_op(g, "Ab", {x, g1}, {g0}, Phase::Backward, A);
    s = serial_schedule_of(g);
    prof = profile_of(g, s, {3000, 1000, 1000, 1000, 1000, 1000});
  }
  SwapContext ctx() const { return {g, s, prof, link, uint64_t{1} << 40, nullptr}; }
};

}  // namespace

TEST_CASE("checkmate's baselines: a plan that misses the budget gives way to a baseline that meets it") {
  const ChainForBaselines c;
  SwapResult r;  // as if checkmate had found nothing: keep everything, 211 kB
  r.target_bytes = 205000;
  keep_the_best_of_baselines(c.ctx(), 205000, r);
  CHECK(r.report["checkmate_plan"]["fits"] == false);
  CHECK(r.report["checkmate_plan"]["peak_bytes"] == 211000);
  REQUIRE(r.report.contains("baseline_chosen"));
  CHECK(r.report["baseline_reason"] == "checkmate's plan misses the budget and this one meets it");
  CHECK(ProgramLoad(c.g, c.s.order).peak_with(r.plan, c.s.stream_of) <= 205000);
  // checkpoint needs blocks, which the chain has not: skipped, with checkpoint's own message.
  bool skipped = false;
  for (const auto& b : r.report["baselines"])
    if (b["policy"] == "checkpoint every 1") skipped = b.contains("skipped");
  CHECK(skipped);
}

TEST_CASE("checkmate's baselines: the proved optimum stays, as no baseline is faster within the budget") {
  const ChainForBaselines c;
  CheckmateOptions o;
  o.limit.bytes = 205000;
  const SwapResult r = CheckmateSwap(o).plan(c.ctx());
  CHECK(r.report["status"] == "optimal");
  CHECK_FALSE(r.report.contains("baseline_chosen"));
  CHECK(r.report["checkmate_plan"]["fits"] == true);
  CHECK(r.report["checkmate_plan"]["iteration_us"].get<double>() == Approx(8.0 + 3.0));  // the ops and A again
  for (const auto& b : r.report["baselines"])
    if (b.contains("iteration_us") && b["fits"] == true) CHECK(b["iteration_us"].get<double>() >= 11.0 - 1e-9);
}
