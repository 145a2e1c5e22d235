// Selective checkpointing (`checkpoint` with `selective: op`) lowered and run: the cache's tensors held to the
// replay, the plan accepted by the independent swap checker, alone and under FSDP2 (each block an FSDP unit whose
// replay reads its regathered parameters), with the live peak between whole-layer checkpointing's and none's.
#include <catch2/catch.hpp>

#include <string>

#include "parallel/rank_local_graph.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/testing/swap_graphs.h"
#include "program/lower.h"
#include "sim/check/swap_plan_checker.h"
#include "sim/testing/fake_run.h"
#include "workloads/llama_models.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

Graph sac_tiny_llama() {
  LlamaConfig c;
  c.name = "tiny";
  c.vocab = 512;
  c.hidden = 256;
  c.layers = 3;
  c.heads = 8;
  c.kv_heads = 4;
  c.intermediate = 688;
  c.max_positions = 128;
  ModelOptions mo;
  mo.batch = 8;  // activations above the weights, gradients and Adam's state: the peak is the backward pass's
  mo.seq_len = 64;
  return make_training_graph(build_llama(c, mo), mo.training);
}

struct SacRun {
  RunResult r;
  SwapCheck check;
  int replays = 0;
};

// `selective` "" is whole-layer checkpointing; "none" no plan.
SacRun sac_run(const Graph& g, const std::string& selective) {
  const Schedule s = serial_schedule_of(g);
  SwapPlan plan;
  if (selective != "none") {
    CheckpointOptions o;
    o.selective = selective;
    CheckpointSwap policy(o);
    IterationProfile none;
    plan = policy.plan({g, s, none, TestLink(), 1 << 30, nullptr}).plan;
    REQUIRE(plan.recomputations.size() == 3);
  }
  const Program p = lower(g, s, plan);
  SacRun out;
  out.r = run_on_fakes(g, p, 2);
  out.check = check_swapped_run(g, p, out.r.trace, 0);
  for (const Command& c : p.iteration) out.replays += c.kind == CmdKind::Launch && c.replay;
  return out;
}

}  // namespace

TEST_CASE("selective op lowers, runs and passes the swap checker, peak between whole-layer and none") {
  const Graph g = sac_tiny_llama();
  const SacRun none = sac_run(g, "none"), full = sac_run(g, ""), op = sac_run(g, "op");
  CHECK(full.check.ok());
  CHECK(op.check.ok());
  // Per layer 30 ops again under SAC: the input RMSNorm (six ops: pow, mean, + eps, rsqrt, x * rstd, the weight's
  // product), the k projection, both rotaries (five ops each: the product by cos, neg, cat, the product by sin, the
  // sum), repeat_kv of k and v (kv_heads 4 of 8 heads), the o projection, the attention residual, the
  // post-attention RMSNorm (six), SiLU, the up projection and the gating product (the views are aliases in dlsim's
  // graph, nothing to re-run).
  CHECK(op.replays == 3 * 30);
  CHECK(full.replays > op.replays);
  CHECK(full.r.peak_live_bytes < op.r.peak_live_bytes);
  CHECK(op.r.peak_live_bytes < none.r.peak_live_bytes);
}

TEST_CASE("selective op composes with FSDP: replays read the regathered parameters, the checker accepts it") {
  parallel::ParallelLayout l;
  l.layout = parallel::Layout::Fsdp;
  l.ranks = 2;
  const Graph g = parallel::rank_local_graph(sac_tiny_llama(), l).graph;
  const SacRun none = sac_run(g, "none"), full = sac_run(g, ""), op = sac_run(g, "op");
  CHECK(full.check.ok());
  CHECK(op.check.ok());
  CHECK(op.replays == 3 * 30);
  CHECK(full.r.peak_live_bytes < op.r.peak_live_bytes);
  CHECK(op.r.peak_live_bytes < none.r.peak_live_bytes);
}
