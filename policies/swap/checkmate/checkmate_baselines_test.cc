// "Never worse than dtr, capuchin or checkpoint at the same budget" (checkmate_baselines.h), on the chain of
// checkmate_swap_test.cc worked by hand there, without a simulator: times are the profile's plus the re-runs'.
#include "policies/swap/checkmate/checkmate_baselines.h"

#include <catch2/catch.hpp>

#include "policies/swap/checkmate/checkmate_swap.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/back_to_back_profile.h"
#include "policies/swap/testing/remat_graphs.h"
#include "policies/swap/testing/swap_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// CheckmateChain (remat_graphs.h): no saving, 211 kB; at 205 kB the optimum re-runs A before Bb (3 us).
struct ChainForBaselines {
  CheckmateChain chain;
  const Graph& g = chain.g;
  Schedule s = serial_schedule_of(g);
  IterationProfile prof = profile_of(g, s, chain.ns);
  TestLink link;
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
