// DTR on hand-made chains (testing/remat_graphs.h): each eviction and replay worked out on paper from the
// h_DTR scores, and the live bytes of each plan recounted from the SwapPlan contract alone.
#include "policies/swap/dtr/dtr_swap.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/remat_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
SwapResult dtr(const Chain4& m, const std::string& heuristic, int64_t limit_mb) {
  Params p(DtrOptions::parameters().specs());
  p.set("heuristic", heuristic);
  p.set("limit_mb", limit_mb);
  DtrSwap d(DtrOptions::parameters().from_params(p));
  return d.plan({m.g, m.schedule, m.profile, TestLink(), 1 << 30, nullptr});
}
using Drop = Recomputation::Drop;
bool same_drops(const std::vector<Drop>& a, const std::vector<Drop>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].tensor != b[i].tensor || a[i].free_after != b[i].free_after) return false;
  return true;
}
}  // namespace

TEST_CASE("dtr under a budget the iteration already fits evicts nothing") {
  const Chain4 m;
  const SwapResult r = dtr(m, "eq", 5);
  CHECK(r.plan.recomputations.empty());
  CHECK(r.target_bytes == 5 * kMiB);
  CHECK(r.report["limit_met"] == true);
  CHECK(r.report["planned_peak_bytes"] == 5 * kMiB);
}

// Budget 3 MiB. Before f4 (pos 3, clock 6 ms) a1, a2, a3 are resident and a4 needs 1 MiB more: a3 is f4's input
// (pinned); h(a1) = 4 ms / (1 MiB x 2 ms) = 2 > h(a2) = 1 / (1 x 1) = 1: a2 goes (free_after 2) under every
// heuristic. Before b4 (pos 4, clock 7 ms) a1, a3, a4 and g4 make 4 MiB again; a4 is pinned:
// - full: h(a1) = (4 + 1 for evicted child a2) / (1 x 3) = 1.67; h(a3) = (1 + 1 for evicted parent a2) / (1 x 1)
//   = 2: a1 goes (free_after 3).
// - eq: a2's class costs 1 ms, so the same scores.
// b3 then fits. Before b2 (pos 6) a2 is recomputed from a1, itself recomputed from w (replay f1, f2). Keeping both
// would need g3, a1, a2, g2 = 4 MiB with all of them pinned; so only b2's input a2 stays (drop free_after 2) and
// a1 is freed after f2 reads it: 3 MiB. a1 stays evicted until b1 (pos 7) needs it: f1 again (drop free_after 3).
TEST_CASE("dtr full and eq evict by the evicted neighbourhood's cost") {
  const Chain4 m;
  for (const char* h : {"full", "eq"}) {
    INFO(h);
    const SwapResult r = dtr(m, h, 3);
    REQUIRE(r.plan.recomputations.size() == 2);
    const Recomputation& x = r.plan.recomputations[0];
    CHECK(x.before == 6);
    CHECK(x.ops == std::vector<OpId>{m.f1, m.f2});
    CHECK(same_drops(x.drops, {{m.a2, 2}}));
    const Recomputation& y = r.plan.recomputations[1];
    CHECK(y.before == 7);
    CHECK(y.ops == std::vector<OpId>{m.f1});
    CHECK(same_drops(y.drops, {{m.a1, 3}}));
    CHECK(r.report["evictions"] == 2);
    CHECK(r.report["replayed_ops"] == 3);
    CHECK(r.report["recompute_ms"] == Approx(9.0));
    CHECK(r.report["limit_met"] == true);
    CHECK(r.report["planned_peak_bytes"] == 3 * kMiB);
    // As the executor counts it (ProgramLoad).
    CHECK(live_bytes_with(m.g, m.schedule.order, r.plan) ==
          std::vector<uint64_t>{kMiB, 2 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB});
  }
}

// local: h(a1) = 4 / (1 x 3) = 1.33 > h(a3) = 1 / (1 x 1): a3 goes before b4 (free_after 3). b3 (pos 5) then
// needs a3: replay f2 (a2 back from a1) and f3. With a1, g4 and g3 that is 5 MiB, all pinned; freeing a2 after
// f3 would still leave 4: out of reach either way, so both stay (drops a2 (2) and a3 (3)), 2 MiB over. The
// iteration's peak is now 5 MiB whatever follows, so before b2 (pos 6) the 4 MiB of a1, a2, g3 and g2 are left
// as they are: evicting a1 there (and replaying f1 before b1, as DTR did before issue 27) would cost 4 ms for
// no lower peak. Costlier than full all the same: 2 replayed ops, 2 ms, and 2 MiB over.
TEST_CASE("dtr local scores a tensor by its own cost only") {
  const Chain4 m;
  const SwapResult r = dtr(m, "local", 3);
  REQUIRE(r.plan.recomputations.size() == 1);
  const Recomputation& x = r.plan.recomputations[0];
  CHECK(x.before == 5);
  CHECK(x.ops == std::vector<OpId>{m.f2, m.f3});
  CHECK(same_drops(x.drops, {{m.a2, 2}, {m.a3, 3}}));
  CHECK(r.report["replayed_ops"] == 2);
  CHECK(r.report["recompute_ms"] == Approx(2.0));
  CHECK(r.report["shortfall_bytes"] == 2 * kMiB);
  CHECK(live_bytes_with(m.g, m.schedule.order, r.plan) ==
        std::vector<uint64_t>{kMiB, 2 * kMiB, 3 * kMiB, 3 * kMiB, 3 * kMiB, 5 * kMiB, 4 * kMiB, 3 * kMiB});
}

// Budget 4 MiB: only before b4 (pos 4, clock 7 ms) does the load (5 MiB) exceed it. h(a1) = 4/(1 x 3), h(a2) =
// 1/(1 x 2), h(a3) = 1/(1 x 1): a2 goes (free_after 3) and comes back before b2 (pos 6) by replaying f2 from the
// resident a1; every step fits.
TEST_CASE("dtr meets a budget the chain can meet, with one replay") {
  const Chain4 m;
  const SwapResult r = dtr(m, "eq", 4);
  REQUIRE(r.plan.recomputations.size() == 1);
  CHECK(r.plan.recomputations[0].before == 6);
  CHECK(r.plan.recomputations[0].ops == std::vector<OpId>{m.f2});
  CHECK(same_drops(r.plan.recomputations[0].drops, {{m.a2, 3}}));
  CHECK(r.report["limit_met"] == true);
  CHECK(peak_of(live_bytes_with(m.g, m.schedule.order, r.plan)) == 4 * kMiB);
}

TEST_CASE("dtr under a budget below anything reachable reports the shortfall and still plans") {
  const Chain4 m;
  const SwapResult r = dtr(m, "full", 1);  // b-steps need 3 MiB at least
  CHECK(r.report["limit_met"] == false);
  CHECK(r.report["shortfall_bytes"].get<uint64_t>() > 0);
  CHECK(r.report["planned_peak_bytes"].get<uint64_t>() == r.report["shortfall_bytes"].get<uint64_t>() + kMiB);
  CHECK(peak_of(live_bytes_with(m.g, m.schedule.order, r.plan)) == r.report["planned_peak_bytes"].get<uint64_t>());
}
