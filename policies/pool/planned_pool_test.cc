#include <catch2/catch.hpp>

#include "policies/planners/planner.h"
#include "policies/pool/testing/lifetime_trace.h"
#include "policies/pool/planned_pool.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

nlohmann::json run_planned(const std::string& planner, const TraceShape& shape, uint64_t* late_mallocs) {
  VirtualDeviceMemory dev(1ull << 32);
  const auto& e = pool_registry().get("planned");
  Params p(e.params);
  p.set("planner", planner);
  CheckedPool pool(dev, [&](DeviceMemory& d) { return e.factory(p, d); });
  uint64_t at = 0;
  run_trace(pool, shape, [&](int it) {
    if (it == 1) at = dev.malloc_calls();
    pool.check_now();
  });
  *late_mallocs = dev.malloc_calls() - at;
  auto j = pool.report();
  pool.check_all_freed(j["pool_bytes"].get<uint64_t>());
  return j;
}

}  // namespace

TEST_CASE("planned pool serves every iteration after the first from one reservation") {
  for (const std::string planner : {"greedy-by-size", "best-fit", "optimal"}) {
    INFO(planner);
    uint64_t late = 0;
    const auto j = run_planned(planner, TraceShape{}, &late);
    CHECK(j["planned"] == true);
    CHECK(j["planned_buffers"] == 60);
    CHECK(j["unplanned_live_at_boundary"] == 3);  // the setup tensors stay in cudaMalloc
    CHECK(j["fallbacks"] == 0);
    CHECK(late == 0);  // the reservation is made in iteration_end(0); nothing after
    CHECK(j["planned_height_bytes"].get<uint64_t>() >= j["load_bytes"].get<uint64_t>());
    CHECK(j["pool_bytes"] == j["planned_height_bytes"]);
    // On this instance LOAD = 22,120 B and the heuristics need 28,192 B; the 1 s search lowers the height but
    // proves nothing (see results/planners/README.md on the search's limits).
    if (planner == "optimal") CHECK(j["planned_height_bytes"].get<uint64_t>() <= 28192);
  }
}

TEST_CASE("planned pool: tensors crossing the boundary and extra requests fall back, invariants hold") {
  TraceShape shape;
  shape.cross_iteration = true;
  shape.extra_alloc_iteration = 5;
  uint64_t late = 0;
  const auto j = run_planned("best-fit", shape, &late);
  CHECK(j["planned"] == true);
  CHECK(j["unplanned_live_at_boundary"] == 4);  // 3 setup tensors and the cross-iteration one
  // The cross-iteration tensor falls back once per planned iteration, plus the extra request.
  CHECK(j["fallbacks"].get<uint64_t>() >= static_cast<uint64_t>(shape.iterations - 1) + 1);
}

TEST_CASE("planned pool rejects an unknown planner") {
  VirtualDeviceMemory dev(1 << 20);
  const auto& e = pool_registry().get("planned");
  Params p(e.params);
  p.set("planner", std::string("nope"));
  CHECK_THROWS_AS(e.factory(p, dev), ConfigError);
}

namespace {
// Forwards to the planned pool and records whether every pointer it hands out is aligned.
class AlignmentProbe : public PoolPolicy {
 public:
  explicit AlignmentProbe(std::unique_ptr<PoolPolicy> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::optional<DevPtr> allocate(const AllocRequest& req) override {
    auto p = inner_->allocate(req);
    if (p && *p % PlannedPool::kPlanAlignment != 0) ++misaligned;
    if (p) ++served;
    return p;
  }
  void deallocate(DevPtr p) override { inner_->deallocate(p); }
  void iteration_end(int i) override { inner_->iteration_end(i); }
  const PoolStats& stats() const override { return inner_->stats(); }
  nlohmann::json report() const override { return inner_->report(); }
  int misaligned = 0, served = 0;

 private:
  std::unique_ptr<PoolPolicy> inner_;
};
}  // namespace

TEST_CASE("planned pool: every planned offset is 256-byte aligned (cuDNN 9 rejects misaligned pointers)") {
  // The trace's sizes (1000..7048 bytes, many not multiples of 256) packed at byte granularity gave offsets that
  // cuDNN rejected on a real H100 with CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER.
  for (const std::string planner : {"greedy-by-size", "best-fit", "optimal"}) {
    INFO(planner);
    VirtualDeviceMemory dev(1ull << 32);
    const auto& e = pool_registry().get("planned");
    Params p(e.params);
    p.set("planner", planner);
    AlignmentProbe probe(e.factory(p, dev));
    run_trace(probe, TraceShape{}, [](int) {});
    CHECK(probe.served > 600);
    CHECK(probe.misaligned == 0);
    const auto j = probe.report();
    CHECK(j["planned_height_bytes"].get<uint64_t>() % PlannedPool::kPlanAlignment == 0);
  }
}
