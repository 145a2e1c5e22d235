#include <catch2/catch.hpp>

#include "policies/pool/testing/lifetime_trace.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/smartpool.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

struct Run {
  nlohmann::json report;
  uint64_t device_mallocs_late = 0;  // device mallocs during the last iterations
};

Run run_smartpool(const TraceShape& shape, SmartPoolOptions opt = {}, int quiet_from = 6) {
  VirtualDeviceMemory dev(1ull << 32);
  CheckedPool pool(dev, [&](DeviceMemory& d) { return std::make_unique<SmartPool>(d, opt); });
  uint64_t at_quiet_start = 0;
  run_trace(pool, shape, [&](int it) {
    if (it == quiet_from) at_quiet_start = dev.malloc_calls();
    pool.check_now();
  });
  Run r;
  r.report = pool.report();
  r.device_mallocs_late = dev.malloc_calls() - at_quiet_start;
  pool.check_all_freed(pool.report()["pool_bytes"].get<uint64_t>());
  return r;
}

}  // namespace

TEST_CASE("smartpool finds the iteration at the first 300-op checkpoint and then makes no device calls") {
  TraceShape shape;
  shape.call_iteration_end = false;  // smartpool must not need it
  const Run r = run_smartpool(shape);
  const auto& j = r.report;
  REQUIRE(j["pattern_found"] == true);
  CHECK(j["pattern_found_at_op"] == 299);
  CHECK(j["detection_tests"] == 1);
  CHECK(j["iteration_length"] == ops_per_iteration(shape));
  // The iteration starts right after the 3 setup allocations: the switch is at an iteration boundary.
  CHECK((j["switch_at_op"].get<uint64_t>() - 3) % ops_per_iteration(shape) == 0);
  CHECK(j["planned"] == true);
  CHECK(j["fallbacks"] == 0);
  CHECK(j["served_from_pool"].get<uint64_t>() > 0);
  CHECK(r.device_mallocs_late == 0);
  // Three tensors live at a time (plus the one being allocated): the pool holds at most four of the largest.
  CHECK(j["pool_bytes"].get<uint64_t>() <= 4 * 7048);
  CHECK(j["pool_bytes"].get<uint64_t>() >= 4 * 1000);
}

TEST_CASE("smartpool detection schedule: a pattern that is too short is never accepted") {
  TraceShape shape;
  shape.tensors = 40;  // 80 ops per iteration: not above the 100-op minimum
  const Run r = run_smartpool(shape);
  CHECK(r.report["pattern_found"] == false);
  CHECK(r.report["planned"] == false);
  CHECK(r.report["detection_tests"] == 2);  // at ops 299 and 599; the 966-op trace never reaches op 1199
}

TEST_CASE("smartpool serves a cross-iteration tensor from its slot and its backup") {
  TraceShape shape;
  shape.cross_iteration = true;
  const Run r = run_smartpool(shape);
  const auto& j = r.report;
  REQUIRE(j["pattern_found"] == true);
  CHECK(j["iteration_length"] == ops_per_iteration(shape));
  // Iteration 0 has no free of the cross tensor, so the first repeat starts mid-iteration, where SINGA keeps
  // it; the pool moves it to the iteration boundary (fewest bytes live), so that the only cross-iteration block
  // is the 5000-byte tensor, with its backup, and the tensors live mid-iteration are not doubled.
  CHECK(j["first_repeat_start_op"] != j["iteration_start_op"]);
  // Boundaries: after the 3 setup ops and iteration 0's ops (one fewer: no free of the cross tensor yet).
  const uint64_t first_boundary = 3 + ops_per_iteration(shape) - 1;
  CHECK((j["iteration_start_op"].get<uint64_t>() - first_boundary) % ops_per_iteration(shape) == 0);
  CHECK(j["cross_iteration_region_bytes"] == 5000);
  CHECK(j["pool_bytes"].get<uint64_t>() >= 2 * 5000);
  CHECK(j["fallbacks"] == 0);
  CHECK(r.device_mallocs_late == 0);
}

TEST_CASE("smartpool counts requests outside the pattern as fallbacks") {
  TraceShape shape;
  shape.extra_alloc_iteration = 8;
  const Run r = run_smartpool(shape);
  REQUIRE(r.report["planned"] == true);
  // The extra malloc, and the requests whose positions it shifts, fall back to cudaMalloc; invariants hold.
  CHECK(r.report["fallbacks"].get<uint64_t>() >= 1);
  CHECK(r.device_mallocs_late >= 1);
}

TEST_CASE("smartpool first-fit colouring is also valid") {
  SmartPoolOptions opt;
  opt.color = ColorMethod::FirstFit;
  const Run r = run_smartpool(TraceShape{}, opt);
  CHECK(r.report["planned"] == true);
  CHECK(r.report["fallbacks"] == 0);
}

TEST_CASE("smartpool is in the pool registry with its parameters checked") {
  VirtualDeviceMemory dev(1 << 20);
  const auto& e = pool_registry().get("smartpool");
  Params p(e.params);
  CHECK(e.factory(p, dev)->name() == "smartpool");
  p.set("color_method", std::string("XX"));
  CHECK_THROWS_AS(e.factory(p, dev), ConfigError);
}
