// A data-parallel layout's collectives simulated as device work (parallel/rank_local_graph.h, hw/collective_op.h):
// the timeline of one rank of a two-layer model under DDP and FSDP2 on the H100 datasheet file, and the exposed
// communication time (experiment/parallel_metrics.h) worked by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "experiment/parallel_metrics.h"
#include "hw/hardware.h"
#include "parallel/rank_local_graph.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "program/lower.h"
#include "sim/executor.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;

namespace {

// Linear(1024, 1024) -> Linear(1024, 257), fp32, AdamW, each layer a block; a batch large enough that fc1's
// backward outlasts fc2's bucket all-reduce.
Graph pc_mlp(int64_t batch) {
  ModelBuilder b("mlp", batch);
  TensorId x = b.input({batch, 1024}, DType::F32);
  b.begin_block("fc1");
  x = b.linear(x, 1024, true, "fc1");
  b.end_block();
  b.begin_block("fc2");
  x = b.linear(x, 257, true, "fc2");
  b.end_block();
  b.cross_entropy_loss(x);
  TrainingOptions t;
  t.optimizer = Optimizer::AdamW;
  return make_training_graph(b.finish(), t);
}

struct PcRun {
  parallel::RankLocalGraph rank;
  RunResult result;
};

PcRun pc_run(const Graph& training, const parallel::ParallelLayout& layout, const Hardware& hw) {
  PcRun out{parallel::rank_local_graph(training, layout), {}};
  const Graph& g = out.rank.graph;
  Schedule s;
  for (const Op& o : g.ops()) s.order.push_back(o.id);
  s.stream_of.assign(g.ops().size(), 0);
  const Program p = lower(g, s, SwapPlan{});
  VirtualDeviceMemory dev(hw.spec.memory_bytes, hw.spec.total_memory_bytes);
  PytorchCachingPool pool(dev, PytorchCachingOptions{});  // the second iteration allocates from its cache
  SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, pool, dev};
  SimOptions opt;
  opt.iterations = 2;
  out.result = simulate(p, ctx, opt);
  return out;
}

const OpRecord& pc_record(const RunResult& r, OpId id, int iteration) {
  for (const OpRecord& o : r.trace.ops)
    if (o.op == id && o.iteration == iteration) return o;
  FAIL("no record of op " << id);
  return r.trace.ops.front();
}

// The last compute (non-collective) kernel of `phase` in `iteration`.
const OpRecord& pc_last_of(const Graph& g, const RunResult& r, Phase phase, int iteration) {
  const OpRecord* last = nullptr;
  for (const OpRecord& o : r.trace.ops)
    if (o.iteration == iteration && g.op(o.op).phase == phase && !is_collective(g.op(o.op).kind) &&
        (!last || o.end > last->end))
      last = &o;
  REQUIRE(last);
  return *last;
}

parallel::ParallelLayout pc_layout(parallel::Layout l, int64_t ranks) {
  parallel::ParallelLayout p;
  p.layout = l;
  p.ranks = ranks;
  return p;
}

}  // namespace

TEST_CASE("DDP on 2 ranks: each bucket's all-reduce on the NCCL stream, the first overlapping the backward") {
  const Hardware hw = load_hardware("h100-sxm-datasheet");
  const PcRun run = pc_run(pc_mlp(16384), pc_layout(parallel::Layout::Ddp, 2), hw);
  const Graph& g = run.rank.graph;
  const RunResult& r = run.result;
  REQUIRE(r.iterations_completed == 2);
  REQUIRE(run.rank.collectives.size() == 2);
  const parallel::CollectiveSite& fc2 = run.rank.collectives[0];  // ready first: fc2.bias, fc2.weight
  const parallel::CollectiveSite& fc1 = run.rank.collectives[1];
  CHECK(fc2.bytes == 257 * 1024 * 4 + 257 * 4);  // 1053700
  CHECK(fc1.bytes == 1024 * 1024 * 4 + 1024 * 4);  // 4198400
  const OpRecord& a0 = pc_record(r, fc2.op, 1);
  const OpRecord& a1 = pc_record(r, fc1.op, 1);
  CHECK(a0.stream == 1);  // the communication stream after the one compute stream
  CHECK(a1.stream == 1);
  // The first bucket's all-reduce starts when fc2's gradients are ready and runs while fc1's backward computes.
  CHECK(a0.start == pc_record(r, fc2.issue_after, 1).end);
  const OpRecord& backward_end = pc_last_of(g, r, Phase::Backward, 1);
  CHECK(a0.start < backward_end.end);
  CHECK(a0.end <= backward_end.end);
  // The last bucket's all-reduce runs alone after the backward, the optimizer waiting for it: its time is the
  // ring's alpha-beta time for 2 ranks on this file's NVLink. By hand: 2(n-1) = 2 steps, alpha = 8.4 us +
  // 2 x 3.4 us = 15.2 us; B = 450 GB/s x 0.82 = 369 GB/s, algbw = B n / (2(n-1)) = 369 GB/s; 4198400 B / 369e9
  // = 11.3778 us; 26.578 us. (The tree has the same alpha here and half the bandwidth: the ring is chosen.)
  CHECK(a1.start >= backward_end.end);
  CHECK(a1.end - a1.start == std::llround((15.2e-6 + 4198400.0 / 369e9) * 1e9));
  const OpRecord& step = pc_record(r, fc2.needed_by, 1);
  CHECK(step.start >= a1.end);
  // The exposed communication: the last all-reduce whole (nothing computes while the optimizer waits), none of
  // the first (hidden under fc1's backward).
  const CommunicationTime t = communication_time(g, r.trace, 1);
  CHECK(t.collective_ns == (a0.end - a0.start) + (a1.end - a1.start));
  CHECK(t.exposed_ns == a1.end - a1.start);
}

TEST_CASE("FSDP on 2 ranks: all-gathers ahead of each unit's compute, reduce-scatters after its backward") {
  const Hardware hw = load_hardware("h100-sxm-datasheet");
  const PcRun run = pc_run(pc_mlp(16384), pc_layout(parallel::Layout::Fsdp, 2), hw);
  const Graph& g = run.rank.graph;
  const RunResult& r = run.result;
  REQUIRE(r.iterations_completed == 2);
  int gathers = 0, scatters = 0;
  for (const parallel::CollectiveSite& c : run.rank.collectives) {
    CAPTURE(c.unit, to_string(c.kind), to_string(c.phase));
    const OpRecord& o = pc_record(r, c.op, 1);
    const OpRecord& user = pc_record(r, c.kind == CollectiveKind::ReduceScatter ? c.issue_after : c.needed_by, 1);
    if (c.kind == CollectiveKind::AllGather) {
      ++gathers;
      CHECK(o.stream == 1);  // FSDP2's all-gather stream
      CHECK(o.end <= user.start);  // the unit's first op waits for its parameters
    } else {
      ++scatters;
      CHECK(o.stream == 2);  // its reduce-scatter stream
      CHECK(o.start >= user.end);  // after the unit's post-backward copy
      CHECK(pc_record(r, c.needed_by, 1).start >= o.end);  // the optimizer after the last reduce-scatter
    }
  }
  CHECK(gathers == 4);  // fc1 and fc2, before forward and again before backward
  CHECK(scatters == 2);
  // Implicit forward prefetch: fc2's all-gather is issued after fc1's forward, on its own stream, and runs
  // while fc1 computes (the host is ahead of the GPU), so fc2's forward need not wait for it.
  const parallel::CollectiveSite* fc2_gather = nullptr;
  for (const parallel::CollectiveSite& c : run.rank.collectives)
    if (c.kind == CollectiveKind::AllGather && c.unit == "fc2" && c.phase == Phase::Forward) fc2_gather = &c;
  REQUIRE(fc2_gather);
  const OpRecord& ag = pc_record(r, fc2_gather->op, 1);
  OpId fc1_op = -1;
  for (const Op& o : g.ops())
    if (o.name == "fc1") fc1_op = o.id;
  REQUIRE(fc1_op >= 0);
  CHECK(fc2_gather->op > fc1_op);
  CHECK(ag.start < pc_record(r, fc1_op, 1).end);
  const CommunicationTime t = communication_time(g, r.trace, 1);
  CHECK(t.exposed_ns <= t.collective_ns);
  CHECK(t.exposed_ns > 0);  // fc1's all-gather at the iteration's start has nothing to hide under
}

TEST_CASE("exposed communication by hand: collective time not covered by any kernel") {
  Graph g;
  Op k;
  k.name = "kernel";
  g.add_op(k);
  Op c;
  c.name = "all_reduce";
  c.kind = OpKind::AllReduce;
  g.add_op(c);
  Trace t;
  // Collectives of iteration 0 over [0, 10) and [20, 30) us; kernels over [5, 25) (iteration 0) and [28, 40)
  // (iteration 1: the next forward hides this iteration's tail). Collective time 20; exposed [0, 5) + [25, 28) = 8.
  t.ops = {OpRecord{0, 1, 1, 0, 10'000}, OpRecord{0, 1, 1, 20'000, 30'000}, OpRecord{0, 0, 0, 5'000, 25'000},
           OpRecord{1, 0, 0, 28'000, 40'000}, OpRecord{1, 1, 1, 40'000, 50'000}};
  const CommunicationTime ct = communication_time(g, t, 0);
  CHECK(ct.collective_ns == 20'000);
  CHECK(ct.exposed_ns == 8'000);
  const nlohmann::json j = parallel_metrics_json(ModelFlops{1e12, "graph", 0}, ct, 1e15, 8, 2'000'000);
  CHECK(j.at("exposed_communication_time_us").get<double>() == 8.0);
  CHECK(j.at("images_per_s_per_gpu").get<double>() == Approx(4000.0));  // 8 / 2 ms
  CHECK(j.at("mfu").get<double>() == Approx(0.5));                      // 1e12 / (2e-3 s x 1e15)
  // a tp group of 4 shares each sample: a quarter of the throughput per GPU; the FLOPs are the caller's (per GPU)
  ModelFlops tp4{1e12, "graph", 0};
  tp4.tp = 4;
  const nlohmann::json j4 = parallel_metrics_json(tp4, ct, 1e15, 8, 2'000'000);
  CHECK(j4.at("images_per_s_per_gpu").get<double>() == Approx(1000.0));
  CHECK(j4.at("mfu").get<double>() == Approx(0.5));
}
