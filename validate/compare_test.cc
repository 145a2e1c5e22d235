#include "validate/compare.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dlsim;

namespace {

Graph two_ops() {
  Graph g;
  Op a;
  a.name = "conv1";
  a.kind = OpKind::Conv2d;
  g.add_op(a);
  a.name = "relu1";
  a.kind = OpKind::Relu;
  g.add_op(a);
  return g;
}

}  // namespace

TEST_CASE("compare: per-op and per-iteration MAPE, peak reserved error and copy times on hand-made traces") {
  const Graph g = two_ops();
  Trace sim, real;
  // Op 0: sim 110 vs real 100 (10 %) in both iterations; op 1: sim 40 vs real 50 and 30 (mean 40 -> 0 %)...
  sim.ops = {{0, 0, 0, 0, 110}, {0, 1, 0, 110, 150}, {1, 0, 0, 200, 310}, {1, 1, 0, 310, 350}};
  real.ops = {{0, 0, 0, 0, 100}, {0, 1, 0, 100, 150}, {1, 0, 0, 200, 300}, {1, 1, 0, 300, 330}};
  real.ops.push_back({-1, 1, 0, 0, 100000});  // setup: ignored
  sim.iterations = {{0, 150}, {200, 350}};
  real.iterations = {{0, 200}, {200, 300}};  // 150 vs 200: 25 %; 150 vs 100: 50 %
  sim.mem = {{0, 0, MemAction::Alloc, 0, 0, 512, 1000}, {0, 1, MemAction::Alloc, 1, 512, 512, 1200}};
  real.mem = {{0, 0, MemAction::Alloc, 0, 0, 512, 1000}};
  sim.copies = {{0, 0, true, 100, 0, 90}};
  real.copies = {{0, 0, true, 100, 0, 100}, {0, 0, false, 100, 0, 50}};
  const Comparison c = compare_traces(sim, real, g);
  REQUIRE(c.ops.size() == 2);
  CHECK(c.ops[0].real_ns == 100);
  CHECK(c.ops[0].sim_ns == 110);
  CHECK(c.ops[0].ape == Approx(10));
  CHECK(c.ops[1].real_ns == 40);
  CHECK(c.ops[1].ape == Approx(0));
  CHECK(c.op_mape == Approx(5));
  REQUIRE(c.iterations.size() == 2);
  CHECK(c.iterations[0].ape == Approx(25));
  CHECK(c.iterations[1].ape == Approx(50));
  CHECK(c.iteration_mape == Approx(37.5));
  CHECK(c.sim_peak_reserved == 1200);
  CHECK(c.real_peak_reserved == 1000);
  CHECK(c.peak_reserved_error == Approx(20));
  REQUIRE(c.copies.size() == 2);
  CHECK(c.copies[0].to_host);
  CHECK(c.copies[0].ape == Approx(10));
  CHECK(c.copies[1].sim_count == 0);
  CHECK(c.copies[1].real_mean_ns == 50);

  std::ostringstream out;
  print_comparison(c, out);
  const std::string s = out.str();
  CHECK(s.find("per-op MAPE:        5.0 % over 2 ops") != std::string::npos);
  CHECK(s.find("per-iteration MAPE: 37.5 %") != std::string::npos);
  CHECK(s.find("conv1") < s.find("relu1"));  // largest absolute error first
}

TEST_CASE("compare: ops measured in only one trace are left out, not counted as errors") {
  const Graph g = two_ops();
  Trace sim, real;
  sim.ops = {{0, 0, 0, 0, 100}};
  real.ops = {{0, 0, 0, 0, 100}, {0, 1, 0, 0, 70}};
  const Comparison c = compare_traces(sim, real, g);
  CHECK(c.ops.size() == 1);
  CHECK(c.op_mape == 0);
  CHECK(c.iterations.empty());
}
