// The lower bound on a swap plan's iteration time, worked by hand on the iteration of SINGA's tests
// (testing/swap_graphs.h: NestedAbsences; MiB and ms; D2H 1 B/ns, H2D 2 B/ns).
#include "policies/swap/core/swap_lower_bound.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/swap_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("the swap lower bound: what can never leave, and what the copy-in link must still move after E") {
  NestedAbsences m;
  const ProgramLoad load(m.g, m.schedule.order);
  // During E (position 10) it reads t3 and s and w stays (its uses are at 3..9 and none after): only t1 and t2
  // can be away, so 30.25 - 6 = 24.25 MiB is the least any plan reaches.
  const SwapLowerBound at25 = swap_lower_bound(m.g, load, m.profile, TestLink(), 25 * kMiB);
  CHECK(at25.reachable);
  CHECK(at25.least_reachable_bytes == 24 * kMiB + kMiB / 4);
  // Over 25 MiB by 5.25 MiB during D..E, 5 MiB of it in tensors of this iteration (w's 0.25 could have left
  // before). After E ends (20 ms) those 5 MiB must come back by the end (22 ms) at 2 B/ns: 2.62144 ms, so at
  // least 0.62144 ms of stall. Going out is easy: 5 MiB at 1 B/ns fit in the 6 ms before D.
  CHECK(at25.iteration_ns == 22 * kMs + 621'440);
  const SwapLowerBound at24 = swap_lower_bound(m.g, load, m.profile, TestLink(), 24 * kMiB);
  CHECK_FALSE(at24.reachable);
  // A limit above the peak costs nothing.
  CHECK(swap_lower_bound(m.g, load, m.profile, TestLink(), 31 * kMiB).iteration_ns == 22 * kMs);
}
