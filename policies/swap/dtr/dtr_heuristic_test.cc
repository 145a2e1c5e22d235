// DTR's cost term on the hand-made chain (testing/remat_graphs.h: Chain4; f1 takes 4 ms, f2..f4 1 ms each), with
// the residency of each activation set by hand.
#include "policies/swap/dtr/dtr_heuristic.h"

#include <catch2/catch.hpp>

#include "policies/swap/testing/remat_graphs.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
double ms(double ns) { return ns / 1e6; }
}  // namespace

TEST_CASE("dtr costs: local is the producer's time, full adds the evicted neighbourhood, eq its classes") {
  const Chain4 m;
  const RematGraph rg(m.g, m.schedule.order, m.profile);
  std::vector<Residency> where(m.g.tensors().size(), Residency::Unborn);
  for (TensorId t : {m.a1, m.a2, m.a3, m.a4}) where[static_cast<size_t>(t)] = Residency::Resident;
  DtrHeuristic local(rg, DtrHeuristicKind::Local, where), full(rg, DtrHeuristicKind::Full, where),
      eq(rg, DtrHeuristicKind::Eq, where);

  where[static_cast<size_t>(m.a2)] = Residency::Evicted;
  eq.left_device(m.a2);  // class {a2}: 1 ms
  full.left_device(m.a2);  // full keeps its scores between reported changes
  CHECK(ms(local.cost(m.a3)) == Approx(1));
  CHECK(ms(local.cost(m.a1)) == Approx(4));
  CHECK(ms(full.cost(m.a3)) == Approx(2));  // + a2, its evicted parent (a2's own parent a1 is resident)
  CHECK(ms(full.cost(m.a1)) == Approx(5));  // + a2, its evicted child
  CHECK(ms(eq.cost(m.a3)) == Approx(2));
  CHECK(ms(full.cost(m.a4)) == Approx(1));  // a3 resident: nothing evicted next to it

  where[static_cast<size_t>(m.a1)] = Residency::Evicted;
  eq.left_device(m.a1);  // joins a2's class: 5 ms
  full.left_device(m.a1);
  CHECK(ms(full.cost(m.a3)) == Approx(6));  // recomputing a3 would redo f2 and f1
  CHECK(ms(eq.cost(m.a3)) == Approx(6));

  where[static_cast<size_t>(m.a1)] = Residency::Resident;
  eq.recomputed(m.a1);  // the class keeps a2 only (never split; its cost less a1's)
  full.recomputed(m.a1);
  CHECK(ms(full.cost(m.a3)) == Approx(2));
  CHECK(ms(eq.cost(m.a3)) == Approx(2));
  where[static_cast<size_t>(m.a3)] = Residency::Dead;  // freed at its last use: off the device for its children
  full.left_device(m.a3);
  CHECK(ms(full.cost(m.a4)) == Approx(3));  // a3 (1 ms) and a2 (1 ms) would be recomputed first
}

TEST_CASE("dtr heuristic names") {
  CHECK(std::string(to_string(DtrHeuristicKind::Full)) == "full");
}
