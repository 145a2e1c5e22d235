#include <catch2/catch.hpp>

#include "policies/planners/planner.h"
#include "policies/pool/testing/lifetime_trace.h"
#include "policies/pool/planned_pool.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// The registry's `planned` pool with the given planner, as an experiment's `pool: {name: planned, planner: ...}`.
std::unique_ptr<PoolPolicy> make_planned(const std::string& planner, DeviceMemory& dev) {
  const auto& e = pool_registry().get("planned");
  Params p(e.params);
  p.set("planner", planner);
  return e.factory(p, dev);
}

nlohmann::json run_planned(const std::string& planner, const TraceShape& shape, uint64_t* late_mallocs) {
  VirtualDeviceMemory dev(1ull << 32);
  CheckedPool pool(dev, [&](DeviceMemory& d) { return make_planned(planner, d); });
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
  CHECK_THROWS_AS(make_planned("nope", dev), ConfigError);
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
  void iteration_begin(int i) override { inner_->iteration_begin(i); }
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
    AlignmentProbe probe(make_planned(planner, dev));
    run_trace(probe, TraceShape{}, [](int) {});
    CHECK(probe.served > 600);
    CHECK(probe.misaligned == 0);
    const auto j = probe.report();
    CHECK(j["planned_height_bytes"].get<uint64_t>() % PlannedPool::kPlanAlignment == 0);
  }
}

namespace {

// One training iteration under a swap plan, as the executor drives a pool: setup allocates a weight `w` that the
// plan swaps (out early in each iteration, back in at the end and kept into the next iteration) and a persistent
// block. Each iteration: activation `a` (swapped out once `b` exists, back in for the backward pass), `b`, a
// temporary `c` that fits only where `a` was, then `w`'s residency and a buffer of the same size as `w` right
// after it (so that a pool matching by the next planned size would hand `w` that buffer's slot).
struct SwapIterationTrace {
  static constexpr uint64_t kA = 4096, kB = 1024, kC = 4096, kW = 2048, kPersistent = 512;
  // Live peak: kPersistent + kW (the weight, before its swap-out) + kA + kB.
  static constexpr uint64_t kLivePeak = kPersistent + kW + kA + kB;
  // What the plan holds at most: a (either residency) beside b; c, then the temporary, where a was.
  static constexpr uint64_t kPlannedLoad = kA + kB;

  void run(PoolPolicy& pool, CheckedPool* checked, int iterations) {
    auto alloc = [&](uint64_t bytes) {
      auto p = pool.allocate({bytes, 0});
      REQUIRE(p.has_value());
      return *p;
    };
    const DevPtr persistent = alloc(kPersistent);
    DevPtr w = alloc(kW);
    for (int it = 0; it < iterations; ++it) {
      pool.iteration_begin(it);
      const DevPtr a = alloc(kA);
      const DevPtr b = alloc(kB);
      pool.deallocate(a);  // a swapped out: its first residency ends
      pool.deallocate(w);  // the weight swapped out after its forward use
      const DevPtr c = alloc(kC);
      pool.deallocate(c);
      const DevPtr a_in = alloc(kA);  // a swapped back in: its second residency
      pool.deallocate(b);
      pool.deallocate(a_in);
      w = alloc(kW);  // the weight back in for the optimizer step, kept into the next iteration
      const DevPtr same_size_as_w = alloc(kW);
      pool.deallocate(same_size_as_w);
      if (checked) checked->check_now();
      pool.iteration_end(it);
    }
    pool.deallocate(w);
    pool.deallocate(persistent);
  }
};

}  // namespace

TEST_CASE("planned pool: each residency of a swapped tensor is its own buffer, and reserved equals the live peak") {
  for (const std::string planner : {"greedy-by-size", "best-fit", "optimal"}) {
    INFO(planner);
    VirtualDeviceMemory dev(1ull << 32);
    CheckedPool pool(dev, [&](DeviceMemory& d) { return make_planned(planner, d); });
    SwapIterationTrace trace;
    const int iterations = 4;
    trace.run(pool, &pool, iterations);
    const auto j = pool.report();
    CHECK(j["planned"] == true);
    // a's two residencies, b, c and the weight-sized temporary: five buffers. As one buffer over both of its
    // residencies, a would overlap c and the plan would need kA + kB + kC.
    CHECK(j["planned_buffers"] == 5);
    CHECK(j["load_bytes"] == SwapIterationTrace::kPlannedLoad);
    CHECK(j["planned_height_bytes"] == j["load_bytes"]);
    // The weight's setup block, freed in iteration 0, is not a buffer of the iteration's; its residency from
    // the backward pass crosses the boundary and stays in cudaMalloc, once per planned iteration.
    CHECK(j["setup_blocks_freed_in_iteration"] == 1);
    CHECK(j["crossing_residencies"] == 1);
    CHECK(j["fallbacks"] == iterations - 1);
    CHECK(j["served_from_pool"] == 5 * (iterations - 1));
    // No byte reserved beyond what is live at the peak, in the profiled iteration or in the planned ones.
    CHECK(dev.peak_reserved() == SwapIterationTrace::kLivePeak);
    pool.check_all_freed(j["pool_bytes"].get<uint64_t>());
  }
}

TEST_CASE("planned pool without iteration_begin profiles from its first request and matches by size") {
  // A caller that never says where setup ends (an older wrapper) gets the pool as it was before the hook: the
  // profile starts at the first request and a request takes the next planned slot whose size it has.
  VirtualDeviceMemory dev(1ull << 32);
  const auto& e = pool_registry().get("planned");
  Params p(e.params);
  auto inner = e.factory(p, dev);
  class NoBegin : public PoolPolicy {
   public:
    explicit NoBegin(PoolPolicy& in) : in_(in) {}
    std::string name() const override { return in_.name(); }
    std::optional<DevPtr> allocate(const AllocRequest& r) override { return in_.allocate(r); }
    void deallocate(DevPtr q) override { in_.deallocate(q); }
    void iteration_end(int i) override { in_.iteration_end(i); }
    const PoolStats& stats() const override { return in_.stats(); }

   private:
    PoolPolicy& in_;
  } pool(*inner);
  TraceShape shape;
  run_trace(pool, shape, [](int) {});
  const auto j = inner->report();
  CHECK(j["planned"] == true);
  CHECK(j["planned_buffers"] == 60);
  CHECK(j["fallbacks"] == 0);
  CHECK(j["served_from_pool"] == 60 * (shape.iterations - 1));
}
