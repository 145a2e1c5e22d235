// Capuchin on the hand-made chain (testing/remat_graphs.h: Chain4; load 1 2 3 4 5 5 4 3 MiB, peak first at
// position 4): a hidden swap when the link is fast enough, a recomputation ranked by MSPS when it is not.
#include "policies/swap/capuchin/capuchin_swap.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/remat_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
// 100 ns per byte each way: a 1 MiB copy takes about 105 ms, far longer than the 11 ms iteration.
class SlowLink : public TransferModel {
 public:
  TimeNs copy_time(CopyDir, uint64_t bytes, bool) const override { return static_cast<TimeNs>(bytes) * 100; }
  double bandwidth(CopyDir, bool) const override { return 1e7; }
  TimeNs latency(CopyDir) const override { return 0; }
};

SwapResult capuchin(const Chain4& m, const TransferModel& link, int64_t limit_mb) {
  Params p(CapuchinOptions::parameters().specs());
  p.set("limit_mb", limit_mb);
  CapuchinSwap c(CapuchinOptions::parameters().from_params(p));
  return c.plan({m.g, m.schedule, m.profile, link, 1 << 30, nullptr});
}
}  // namespace

// TestLink: 1 MiB out in 1.0586 ms, in 0.5343 ms. At the peak (b4, pos 4) a1 (accessed at 1 and 7), a2 (2, 6) and
// a3 (3, 5) are resident and unused. FreeTime(a1) = (10 - 0.534) - (5 + 1.059) = 3.41 ms, a2: (9 - 0.534) -
// (6 + 1.059) = 1.41 ms, a3: (8 - 0.534) - (7 + 1.059) < 0. a1 has the largest: out after 1; the copy-out ends at
// 6.06 ms, after f3 (ends 6) and before f4 ends (7): freed after 3. In after 5 (b3 ends at 9, +0.53 <= 10, b1's
// start; after 6 would be late). Off during 4..5: the load becomes 1 2 3 4 4 4 4 3.
TEST_CASE("capuchin swaps the tensor whose transfer hides best behind compute") {
  const Chain4 m;
  const SwapResult r = capuchin(m, TestLink(), 4);
  REQUIRE(r.plan.actions.size() == 1);
  CHECK(r.plan.recomputations.empty());
  const SwapAction& a = r.plan.actions[0];
  CHECK(a.tensor == m.a1);
  CHECK(a.out_after == 1);
  CHECK(a.free_after == 3);
  CHECK(a.in_issue_after == 5);
  CHECK(a.in_needed_by == 7);
  CHECK(r.report["hidden_swaps"] == 1);
  CHECK(r.report["limit_met"] == true);
  CHECK(r.report["planned_peak_bytes"] == 4 * kMiB);
  CHECK(r.target_bytes == 4 * kMiB);
  CHECK(live_bytes_with(m.g, m.schedule.order, r.plan) ==
        std::vector<uint64_t>{kMiB, 2 * kMiB, 3 * kMiB, 4 * kMiB, 4 * kMiB, 4 * kMiB, 4 * kMiB, 3 * kMiB});
}

// SlowLink: no swap hides (each would stall about 200 ms). Recomputing a1 before b1 replays f1 (4 ms); a2 before
// b2 replays f2 from the resident a1 (1 ms); a3 before b3 replays f3 from a2 (1 ms). MSPS 1 MiB / 1 ms for a2
// and a3, the first found (a2) taken: dropped after 2, f2 replayed before 6. The load becomes 1 2 3 3 4 4 4 3;
// at 6 the replay needs a1, g3 and a2 (3 MiB) before b2 adds g2.
TEST_CASE("capuchin recomputes by memory saved per second when no swap hides") {
  const Chain4 m;
  const SwapResult r = capuchin(m, SlowLink(), 4);
  CHECK(r.plan.actions.empty());
  REQUIRE(r.plan.recomputations.size() == 1);
  const Recomputation& x = r.plan.recomputations[0];
  CHECK(x.before == 6);
  CHECK(x.ops == std::vector<OpId>{m.f2});
  REQUIRE(x.drops.size() == 1);
  CHECK(x.drops[0].tensor == m.a2);
  CHECK(x.drops[0].free_after == 2);
  CHECK(r.report["recompute_ms"] == Approx(1.0));
  CHECK(r.report["planned_peak_bytes"] == 4 * kMiB);
  CHECK(live_bytes_with(m.g, m.schedule.order, r.plan) ==
        std::vector<uint64_t>{kMiB, 2 * kMiB, 3 * kMiB, 3 * kMiB, 4 * kMiB, 4 * kMiB, 4 * kMiB, 3 * kMiB});
}

// Below what any plan reaches (b3 alone needs g4, a3 and g3: 3 MiB): the plan it could make, and the shortfall.
TEST_CASE("capuchin under a budget out of reach reports the shortfall") {
  const Chain4 m;
  const SwapResult r = capuchin(m, SlowLink(), 1);
  CHECK(r.report["limit_met"] == false);
  CHECK(r.report["shortfall_bytes"].get<uint64_t>() >= 2 * kMiB);
  CHECK(r.report["planned_peak_bytes"].get<uint64_t>() == r.report["shortfall_bytes"].get<uint64_t>() + kMiB);
  // a2 recomputed before b2, a3 swapped out across b4 (no recomputation: a2 is off when b3 needs it); at b3
  // nothing resident is left to move: 4 MiB, 3 over.
  CHECK(r.plan.recomputations.size() == 1);
  CHECK(r.plan.actions.size() == 1);
  CHECK(r.report["planned_peak_bytes"] == 4 * kMiB);
  CHECK(peak_of(live_bytes_with(m.g, m.schedule.order, r.plan)) == 4 * kMiB);
}
