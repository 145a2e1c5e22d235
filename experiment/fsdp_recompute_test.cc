// FSDP2 with activation checkpointing: a recomputed forward op reads its unit's regathered parameters
// (Graph::replay_source), so the forward's gathered copy is freed after the unit's forward, as under FSDP2, where
// torch.utils.checkpoint's recomputation runs inside the unit's backward, after the pre-backward all-gather.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "parallel/rank_local_graph.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/testing/swap_graphs.h"
#include "program/lower.h"
#include "sim/check/swap_plan_checker.h"
#include "sim/testing/fake_run.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Two blocks, each a linear (1024 x 1024, no bias) then a ReLU out of place, on one row of 1024 floats, then
// cross entropy: x -> [lin0, relu0 -> h1] -> [lin1, relu1 -> h2] -> loss. SGD with momentum.
Graph fr_two_blocks() {
  ModelBuilder b("two", 1);
  TensorId h = b.input({1, 1024}, DType::F32, "x");
  for (int i = 0; i < 2; ++i) {
    const std::string n = "block" + std::to_string(i);
    b.begin_block(n);
    h = b.relu(b.linear(h, 1024, false, n + ".lin"), false, n + ".relu");
    b.end_block();
  }
  b.cross_entropy_loss(h, "loss");
  return make_training_graph(b.finish(), TrainingOptions{});
}

struct FrRun {
  Graph g;
  Program p;
  RunResult r;
  SwapCheck check;
};

// FSDP on `ranks` (each block a unit), checkpointing every block, lowered serially and run twice on the fakes.
FrRun fr_run(int64_t ranks, bool reshard = true) {
  parallel::ParallelLayout l;
  l.layout = parallel::Layout::Fsdp;
  l.ranks = ranks;
  l.reshard_after_forward = reshard;
  FrRun f;
  f.g = parallel::rank_local_graph(fr_two_blocks(), l).graph;
  const Schedule s = serial_schedule_of(f.g);
  CheckpointOptions o;
  o.every = 1;
  CheckpointSwap policy(o);
  IterationProfile none;
  const SwapResult plan = policy.plan({f.g, s, none, TestLink(), 1 << 30, nullptr});
  REQUIRE(plan.plan.recomputations.size() == 2);
  f.p = lower(f.g, s, plan.plan);
  f.r = run_on_fakes(f.g, f.p, 2);
  f.check = check_swapped_run(f.g, f.p, f.r.trace, 0);
  return f;
}

// The iteration's allocations, frees and launches as text ("+ t", "- t", "L op", "L* op" for a replay).
std::vector<std::string> fr_commands(const FrRun& f) {
  std::vector<std::string> v;
  for (const Command& c : f.p.iteration) {
    if (c.kind == CmdKind::Launch) v.push_back((c.replay ? "L* " : "L ") + f.g.op(c.op).name);
    if (c.kind == CmdKind::Alloc) v.push_back("+ " + f.g.tensor(c.tensor).name);
    if (c.kind == CmdKind::Free) v.push_back("- " + f.g.tensor(c.tensor).name);
  }
  return v;
}

size_t fr_at(const std::vector<std::string>& v, const std::string& what) {
  const auto it = std::find(v.begin(), v.end(), what);
  REQUIRE(it != v.end());
  return static_cast<size_t>(it - v.begin());
}

}  // namespace

// W = 1024 * 1024 * 4 = 4194304 bytes, a gathered (or regathered) weight, its unsharded gradient and its unit's
// reduce-scatter input each (fp32, the rows divide by 2: no padding); W/2 its shard, its momentum shard and its
// gradient shard; S = 4096 an activation row.
TEST_CASE("FSDP 2 with checkpointing: replays read the regathered copy, and the peak worked by hand") {
  constexpr uint64_t W = 4194304, S = 4096;
  const FrRun f = fr_run(2);
  const std::vector<std::string> v = fr_commands(f);
  // Each unit's forward copy is freed after its forward op. In the backward each unit is gathered again by its own
  // all-gather op, FSDP2's backward prefetch issuing block0's right after block1's, both before block1's
  // recomputation, which reads block1's regathered copy; block1's is freed after its post-backward, before block0's
  // recomputation.
  CHECK(fr_at(v, "- block0.lin.weight") < fr_at(v, "L block1.lin"));
  CHECK(fr_at(v, "- block1.lin.weight") < fr_at(v, "L loss"));
  CHECK(fr_at(v, "+ block1.lin.weight.regathered") < fr_at(v, "+ block0.lin.weight.regathered"));
  CHECK(fr_at(v, "+ block0.lin.weight.regathered") < fr_at(v, "L* block1.lin"));
  CHECK(fr_at(v, "- block1.lin.weight.regathered") > fr_at(v, "L block1.lin.bwd_weight"));
  CHECK(fr_at(v, "- block1.lin.weight.regathered") < fr_at(v, "L* block0.lin"));
  CHECK(fr_at(v, "- block0.lin.weight.regathered") > fr_at(v, "L block0.lin.bwd_weight"));
  CHECK(std::count(v.begin(), v.end(), "+ block0.lin.weight") == 1);  // not brought back for the replay
  // The peak is at block1's post-backward (its weight-gradient op): the persistent shards and momentum shards of
  // both weights (2 W), block1's regathered weight and block0's prefetched one (2 W), block1's unsharded gradient
  // and reduce-scatter input (2 W), and four rows (x, block0.relu.out, grad.block1.lin.out, grad.block0.relu.out):
  // 6 W + 4 S. At block0's post-backward there are 5.5 W + 2 S (block1's gradient shard beside block0's three).
  CHECK(f.r.peak_live_bytes == 6 * W + 4 * S);
  CHECK(f.check.ok());
  // Holding each unit gathered from its forward to its backward (no resharding): at block1's post-backward both
  // forward copies (2 W) beside the shards (2 W), block1's gradient and reduce-scatter input (2 W) and the same four
  // rows: the same 6 W + 4 S. With two units and a prefetch of one, resharding saves nothing at this peak; on
  // more units it does (parallel_run_test.cc: cifar-resnet20 on 4 ranks; Llama-3-8B, docs/multi-gpu.md).
  const FrRun held = fr_run(2, false);
  CHECK(held.r.peak_live_bytes == 6 * W + 4 * S);
  CHECK(held.check.ok());
}

TEST_CASE("FSDP: a replay that would run before its unit's regathered copy exists is an error of the lowering") {
  // block0's recomputation moved before the loss's backward, where no unit is gathered again yet (the backward's
  // all-gathers are issued after it).
  const Graph g = [] {
    parallel::ParallelLayout l;
    l.layout = parallel::Layout::Fsdp;
    l.ranks = 2;
    return parallel::rank_local_graph(fr_two_blocks(), l).graph;
  }();
  const Schedule s = serial_schedule_of(g);
  CheckpointOptions o;
  o.every = 1;
  CheckpointSwap policy(o);
  IterationProfile none;
  SwapPlan plan = policy.plan({g, s, none, TestLink(), 1 << 30, nullptr}).plan;
  REQUIRE(plan.recomputations.size() == 2);
  int loss_bwd = -1;  // its position in the schedule's order
  for (size_t p = 0; p < s.order.size(); ++p)
    if (g.op(s.order[p]).name == "loss.bwd") loss_bwd = static_cast<int>(p);
  REQUIRE(loss_bwd >= 0);
  plan.recomputations[0].before = loss_bwd;  // [0] is block0's
  CHECK_THROWS_WITH(lower(g, s, plan), Catch::Contains("block0.lin.weight.regathered") && Catch::Contains("after the replay"));
}
