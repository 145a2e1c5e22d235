#include <catch2/catch.hpp>

#include "policies/concurrency/schedule_estimate.h"
#include "policies/concurrency/schedules.h"
#include "policies/testing/fakes.h"

using namespace dlsim;
using namespace dlsim::testing;

TEST_CASE("fair rates: demands that fit run at full speed, others share max-min fairly") {
  std::vector<double> r;
  fair_rates({0.3, 0.5}, r);
  CHECK(r == std::vector<double>{1.0, 1.0});
  fair_rates({1.0, 1.0}, r);
  CHECK(r[0] == Approx(0.5));
  CHECK(r[1] == Approx(0.5));
  fair_rates({0.2, 1.0}, r);  // the small one gets all it wants, the big one the rest
  CHECK(r[0] == Approx(1.0));
  CHECK(r[1] == Approx(0.8));
}

TEST_CASE("the estimate of a fork: full-GPU kernels gain nothing side by side, half-GPU ones overlap") {
  for (int64_t permille : {1000, 500}) {
    Graph g;
    const TensorId x = tensor(g, "x", 64), ta = tensor(g, "ta", 64), tb = tensor(g, "tb", 64), tc = tensor(g, "tc", 64);
    op(g, "a", {x}, {ta}, 1000, permille);
    op(g, "b", {ta}, {tb}, 4000, permille);
    op(g, "c", {ta}, {tc}, 4000, permille);
    AttrKernels k;
    const OpDag dag = op_dag(g);
    const Schedule serial = serial_schedule_of(g);
    Schedule two = serial;
    two.num_streams = 2;
    two.stream_of = {0, 0, 1};
    CHECK(estimate_schedule(g, dag, k, serial, 0) == 9000);
    CHECK(estimate_schedule(g, dag, k, two, 0) == (permille == 1000 ? 9000 : 5000));
    // The host issues one op per 3 us: b starts at 6 us, c at 9 us (full-GPU kernels then share the SMs).
    CHECK(estimate_schedule(g, dag, k, two, 3000) == (permille == 1000 ? 14000 : 13000));
  }
}
