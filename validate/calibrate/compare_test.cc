#include "validate/calibrate/compare.h"

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
  CHECK(*c.op_mape == Approx(5));
  REQUIRE(c.iterations.size() == 2);
  CHECK(c.iterations[0].ape == Approx(25));
  CHECK(c.iterations[1].ape == Approx(50));
  CHECK(*c.iteration_mape == Approx(37.5));
  CHECK(c.sim_peak_reserved == 1200);
  CHECK(c.real_peak_reserved == 1000);
  CHECK(*c.peak_reserved_error == Approx(20));
  REQUIRE(c.copies.size() == 2);
  CHECK(c.copies[0].to_host);
  CHECK(*c.copies[0].ape == Approx(10));
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
  CHECK(*c.op_mape == 0);
  CHECK(c.iterations.empty());
}

TEST_CASE("compare: a measured figure of 0 is not comparable: left out and counted, and no summary reads 0 %") {
  const Graph g = two_ops();
  Trace sim, real;
  sim.ops = {{0, 0, 0, 0, 110}, {0, 1, 0, 110, 150}};
  real.ops = {{0, 0, 0, 0, 0}, {0, 1, 0, 0, 0}};  // every op measured at 0 ns
  sim.iterations = {{0, 150}};
  real.iterations = {{0, 0}};
  real.copies = {{0, 0, true, 100, 5, 5}};
  const Comparison c = compare_traces(sim, real, g);
  CHECK(c.ops.empty());
  CHECK(c.ops_not_comparable == 2);
  CHECK_FALSE(c.op_mape);
  CHECK(c.iterations_not_comparable == 1);
  CHECK_FALSE(c.iteration_mape);
  CHECK_FALSE(c.peak_reserved_error);  // no reserved memory measured
  REQUIRE(c.copies.size() == 1);
  CHECK_FALSE(c.copies[0].ape);
  std::ostringstream out;
  print_comparison(c, out);
  CHECK_THAT(out.str(), Catch::Contains("per-op MAPE:        n/a over 0 ops (2 not comparable: measured at 0 ns)"));
  CHECK_THAT(out.str(), Catch::Contains("per-iteration MAPE: n/a over 0 iterations (1 not comparable"));
  CHECK(out.str().find("0.0 %") == std::string::npos);
  const nlohmann::json j = comparison_to_json(c);
  CHECK(j["op_mape"].is_null());
  CHECK(j["iteration_mape"].is_null());
  CHECK(j["copies"][0]["ape"].is_null());
}

TEST_CASE("compare: a simulated host that issues ahead is compared by the iteration's period, not its raw span") {
  // As a real ResNet-50 trace showed: the simulator's iteration i starts (host issue) while i-1 still runs on
  // the device, so raw spans grow 12.3, 17.7, 26.9 ms... while the period is 12.0 ms; the GPU harness
  // synchronises first, so its spans are its durations.
  Trace sim, real;
  sim.iterations = {{0, 12000}, {6000, 24000}, {9000, 36000}};
  real.iterations = {{50000, 62000}, {62500, 74500}, {75000, 87000}};
  CHECK(iteration_durations(sim) == std::vector<double>{12000, 12000, 12000});
  CHECK(iteration_durations(real) == std::vector<double>{12000, 12000, 12000});
  Graph g;
  const Comparison c = compare_traces(sim, real, g);
  REQUIRE(c.iterations.size() == 3);
  CHECK(*c.iteration_mape == Approx(0));
}

TEST_CASE("compare: the simulated twin's warm-up iterations are numbered as dlsim-cuda numbers its own") {
  // dlsim validate simulates warm-up + measured iterations; dlsim-cuda drops the warm-up from its trace. Before
  // this, iteration 0 of the simulation (cold: every cudaMalloc of a growing pool) met the first warm measured one.
  Trace t;
  t.iterations = {{0, 10}, {5, 22}, {20, 30}, {30, 40}};  // iteration 2 is issued while 1 still runs
  for (int i = 0; i < 4; ++i) t.ops.push_back({i, 0, 0, i * 10, i * 10 + 5});
  t.mem.push_back({-1, 0, MemAction::Alloc, 0, 0, 8, 8});  // setup
  t.mem.push_back({4, 0, MemAction::Free, 0, 0, 8, 0});    // teardown, after the 4 iterations
  number_as_measured(t, 2);
  REQUIRE(t.iterations.size() == 2);
  CHECK(t.iterations[0].start == 22);  // the device could start it when the last warm-up iteration ended
  CHECK(t.ops[0].iteration == -2);
  CHECK(t.ops[1].iteration == -2);
  CHECK(t.ops[2].iteration == 0);
  CHECK(t.ops[3].iteration == 1);
  CHECK(t.mem[0].iteration == -1);
  CHECK(t.mem[1].iteration == 2);  // as dlsim-cuda numbers its teardown: after its 2 measured iterations
}
