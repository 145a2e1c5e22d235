#include "sim/stage_simulation.h"

#include <catch2/catch.hpp>

#include "policies/testing/fakes.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// A kernel of `blocks` blocks (1 per SM on the fake GPU's 100 SMs) that takes `ns` alone.
OpId grid(Graph& g, const std::string& name, int64_t ns, int64_t blocks, int64_t per_sm = 1) {
  const OpId id = op(g, name, {}, {}, ns);
  g.op(id).set_attr(Attr::blocks, blocks);
  g.op(id).set_attr(Attr::blocks_per_sm, per_sm);
  return id;
}

struct Stage {
  Graph g;
  AttrKernels kernels;
  LinearLink link{10.0, 10.0, 1000};
  GpuSpec gpu = fake_gpu();
  TimeNs run(const std::vector<std::vector<OpId>>& groups, TimeNs overhead = 0) {
    return simulate_stage(g, gpu, kernels, link, groups, overhead);
  }
};

}  // namespace

TEST_CASE("stage simulation: one group runs its chain at standalone speed") {
  Stage s;
  const OpId a = grid(s.g, "a", 1000, 250), b = grid(s.g, "b", 1001, 250);
  CHECK(s.run({{a, b}}) == 2001);
}

TEST_CASE("stage simulation: the device model's co-execution, not a fluid share") {
  Stage s;
  SECTION("two full-GPU kernels overlap only in their tails") {
    // 150 blocks on 100 slots: a full wave then a half wave; b takes the free half at 1000 (see device_model_test).
    const OpId a = grid(s.g, "a", 2000, 150), b = grid(s.g, "b", 2000, 150);
    CHECK(s.run({{a}, {b}}) == 3000);
    // A fluid share of the SMs (both at demand 1) would give no overlap at all: 4000.
  }
  SECTION("full waves leave nothing to overlap") {
    const OpId a = grid(s.g, "a", 2000, 200), b = grid(s.g, "b", 2000, 200);
    CHECK(s.run({{a}, {b}}) == 4000);
  }
  SECTION("two small kernels run side by side") {
    const OpId a = grid(s.g, "a", 1000, 30, 2), b = grid(s.g, "b", 1000, 30, 2);
    CHECK(s.run({{a}, {b}}) == 1000);
  }
}

TEST_CASE("stage simulation: the host issues round-robin across groups and a stage lasts at least its issue time") {
  Stage s;
  const OpId a = grid(s.g, "a", 1000, 30, 2), b = grid(s.g, "b", 1000, 30, 2), c = grid(s.g, "c", 1000, 30, 2);
  // Issue order a (t=0), c (t=300), b (t=600): b starts after a ends and after its own issue: 600 + 1000.
  CHECK(s.run({{a, b}, {c}}, 300) == 2000);  // a 0-1000, c 300-1300, b 1000-2000
  // With launches slower than kernels the host bounds the stage: b reaches the GPU at 10000 and ends at 11000,
  // but three launches take the host 15000.
  CHECK(s.run({{a, b}, {c}}, 5000) == 15000);
}

TEST_CASE("stage simulation: rejects no groups and too many") {
  Stage s;
  const OpId a = grid(s.g, "a", 1000, 30);
  CHECK_THROWS_WITH(s.run({}), Catch::Contains("0 groups"));
  CHECK_THROWS_WITH(s.run(std::vector<std::vector<OpId>>(kMaxStageGroups + 1, {a})), Catch::Contains("65 groups"));
}
