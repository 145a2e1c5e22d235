// The rank-local graph of the two-layer MLP of model_state_sharding_test.cc (Linear(256, 1024) -> ReLU ->
// Linear(1024, 257), float32, AdamW), each layer a block, every byte count worked by hand below.
#include "parallel/rank_local_graph.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::parallel;

namespace {

Graph rl_mlp_training_graph() {
  ModelBuilder b("mlp", 8);
  TensorId x = b.input({8, 256}, DType::F32);
  b.begin_block("fc1");
  x = b.linear(x, 1024, true, "fc1");
  b.end_block();
  x = b.relu(x, true, "relu");
  b.begin_block("fc2");
  x = b.linear(x, 257, true, "fc2");
  b.end_block();
  b.cross_entropy_loss(x);
  TrainingOptions t;
  t.optimizer = Optimizer::AdamW;
  return make_training_graph(b.finish(), t);
}

// Bytes of the persistent tensors by category.
std::map<MemoryCategory, uint64_t> rl_persistent_bytes(const RankLocalGraph& r) {
  std::map<MemoryCategory, uint64_t> m;
  for (const Tensor& t : r.graph.tensors())
    if (t.persistent) m[r.categories[static_cast<size_t>(t.id)]] += t.bytes;
  return m;
}

const Tensor& rl_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors())
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return g.tensors().front();
}

// The first and last op (issue order) that use t.
std::pair<OpId, OpId> rl_uses(const Graph& g, TensorId t) {
  OpId first = -1, last = -1;
  for (const Op& o : g.ops()) {
    bool used = o.workspace == t;
    for (TensorId i : o.inputs) used |= i == t;
    for (TensorId i : o.outputs) used |= i == t;
    if (!used) continue;
    if (first < 0) first = o.id;
    last = o.id;
  }
  return {first, last};
}

bool rl_reads(const Op& o, TensorId t) { return std::find(o.inputs.begin(), o.inputs.end(), t) != o.inputs.end(); }
bool rl_writes(const Op& o, TensorId t) { return std::find(o.outputs.begin(), o.outputs.end(), t) != o.outputs.end(); }

OpId rl_first_optimizer_op(const Graph& g) {
  for (const Op& o : g.ops())
    if (o.phase == Phase::Optimizer) return o.id;
  FAIL("no optimizer op");
  return -1;
}

// The collective op of `kind` named for `unit` in `phase`.
OpId rl_collective(const Graph& g, OpKind kind, const std::string& unit, Phase phase) {
  for (const Op& o : g.ops())
    if (o.kind == kind && o.phase == phase && o.name.ends_with("." + unit)) return o.id;
  FAIL("no " << to_string(kind) << " of " << unit);
  return -1;
}

OpId rl_op_named(const Graph& g, const std::string& name) {
  for (const Op& o : g.ops())
    if (o.name == name) return o.id;
  FAIL("no op " << name);
  return -1;
}

ParallelLayout rl_layout(Layout l, int64_t n) {
  ParallelLayout p;
  p.layout = l;
  p.ranks = n;
  return p;
}

// fc1.weight 1024*256*4 = 1048576, fc1.bias 4096, fc2.weight 257*1024*4 = 1052672, fc2.bias 1028.
constexpr uint64_t rl_kParams = 1048576 + 4096 + 1052672 + 1028;  // 2106372

}  // namespace

TEST_CASE("one rank is the training graph itself") {
  const Graph g = rl_mlp_training_graph();
  for (Layout l : {Layout::Ddp, Layout::Fsdp, Layout::Zero}) {
    const RankLocalGraph r = rank_local_graph(g, rl_layout(l, 1));
    REQUIRE(r.graph.tensors().size() == g.tensors().size());
    REQUIRE(r.graph.ops().size() == g.ops().size());
    for (const Tensor& t : g.tensors()) {
      CHECK(r.graph.tensor(t.id).bytes == t.bytes);
      CHECK(r.graph.tensor(t.id).persistent == t.persistent);
    }
    CHECK(r.collectives.empty());
  }
}

TEST_CASE("the plain graph's categories: weights, AdamW state twice, no communication") {
  const RankLocalGraph r = rank_local_graph(rl_mlp_training_graph(), ParallelLayout{});
  const auto m = rl_persistent_bytes(r);
  CHECK(m.at(MemoryCategory::Weights) == rl_kParams);
  CHECK(m.at(MemoryCategory::OptimizerState) == 2 * rl_kParams);
  CHECK(m.count(MemoryCategory::CommunicationBuckets) == 0);
}

TEST_CASE("DDP on 2 ranks: replicas plus the reducer's two buckets, in gradient-ready order") {
  const RankLocalGraph r = rank_local_graph(rl_mlp_training_graph(), rl_layout(Layout::Ddp, 2));
  const auto m = rl_persistent_bytes(r);
  CHECK(m.at(MemoryCategory::Weights) == rl_kParams);
  CHECK(m.at(MemoryCategory::OptimizerState) == 2 * rl_kParams);
  // Ready order fc2.bias, fc2.weight (1028 + 1052672 = 1053700 >= 1 MiB closes the first bucket), then fc1.bias,
  // fc1.weight (4096 + 1048576 = 1052672, under 25 MiB, left open).
  CHECK(rl_named(r.graph, "ddp.bucket.0").bytes == 1053700);
  CHECK(rl_named(r.graph, "ddp.bucket.1").bytes == 1052672);
  CHECK(m.at(MemoryCategory::CommunicationBuckets) == rl_kParams);
  REQUIRE(r.collectives.size() == 2);
  const OpId step = rl_first_optimizer_op(r.graph);
  for (const CollectiveSite& c : r.collectives) {
    CHECK(c.kind == CollectiveKind::AllReduce);
    CHECK(r.graph.op(c.issue_after).phase == Phase::Backward);
    CHECK(c.needed_by == step);
    // The op: issued right after the bucket's last gradient, in place on the bucket, which that op fills and
    // the optimizer's first op reads (finalize_backward's wait).
    REQUIRE(c.op == c.issue_after + 1);
    const Op& o = r.graph.op(c.op);
    CHECK(o.kind == OpKind::AllReduce);
    CHECK(o.attr(Attr::message_bytes) == static_cast<int64_t>(c.bytes));
    CHECK(o.attr(Attr::ranks) == 2);
    CHECK(o.attr(Attr::comm_stream) == 0);
    CHECK(o.inputs == std::vector<TensorId>{c.inputs});
    CHECK(o.outputs == o.inputs);
    CHECK(rl_reads(r.graph.op(step), o.inputs[0]));
    CHECK(rl_writes(r.graph.op(c.issue_after), o.inputs[0]));
  }
  CHECK(r.graph.ops().size() == rl_mlp_training_graph().ops().size() + 2);
  CHECK(r.collectives[0].bytes == 1053700);  // fc2's gradients are ready first
  CHECK(r.collectives[0].issue_after < r.collectives[1].issue_after);
}

TEST_CASE("FSDP on 2 and 4 ranks: rank 0's shards, each unit's gathered bytes and their lifetimes") {
  const Graph g = rl_mlp_training_graph();
  struct Case {
    int64_t ranks;
    uint64_t shard;         // parameters and gradient storage of rank 0
    uint64_t fc2_gathered;  // the fc2 unit's padded storage
  };
  // 2 ranks: fc1.weight 512 rows * 1024 B = 524288, fc1.bias 512 * 4 = 2048, fc2.weight ceil(257/2) = 129 rows *
  // 4096 B = 528384, fc2.bias 129 * 4 = 516: 1055236. Gathered fc2: 258 rows * (4096 + 4) = 1057800.
  // 4 ranks: 256 rows: 262144 + 1024; fc2 65 rows: 266240 + 260: 529668. Gathered fc2: 260 * 4100 = 1066000.
  // fc1's rows divide: its unit gathers 1024 * (1024 + 4) = 1052672 either way.
  for (const Case c : {Case{2, 1055236, 1057800}, Case{4, 529668, 1066000}}) {
    CAPTURE(c.ranks);
    const RankLocalGraph r = rank_local_graph(g, rl_layout(Layout::Fsdp, c.ranks));
    const Graph& rg = r.graph;
    const auto m = rl_persistent_bytes(r);
    CHECK(m.at(MemoryCategory::Weights) == c.shard);
    CHECK(m.at(MemoryCategory::OptimizerState) == 2 * c.shard);  // rank 0 holds full chunks: local = storage
    CHECK(m.count(MemoryCategory::GatheredParameters) == 0);     // gathered ones are transient
    CHECK(rl_named(rg, "fc1.weight.shard").bytes + rl_named(rg, "fc1.bias.shard").bytes +
              rl_named(rg, "fc2.weight.shard").bytes + rl_named(rg, "fc2.bias.shard").bytes == c.shard);
    CHECK(rl_named(rg, "fc2.weight").bytes + rl_named(rg, "fc2.bias").bytes == c.fc2_gathered);
    CHECK(rl_named(rg, "fc1.weight").bytes + rl_named(rg, "fc1.bias").bytes == 1052672);
    CHECK(rl_named(rg, "fc2.weight.regathered").bytes == rl_named(rg, "fc2.weight").bytes);
    CHECK(rl_named(rg, "fsdp.reduce_scatter_input.fc2").bytes == c.fc2_gathered);  // fp32 reduce
    // Lifetimes: fc2's gathered parameters from its all-gather to its forward op, again from its backward
    // all-gather over its backward ops.
    const OpId fc2 = rl_op_named(rg, "fc2");
    const OpId gather = rl_collective(rg, OpKind::AllGather, "fc2", Phase::Forward);
    CHECK(rl_uses(rg, rl_named(rg, "fc2.bias").id) == std::pair<OpId, OpId>{gather, fc2});
    CHECK(gather == fc2 - 1);  // in fc2's pre-forward hook: implicit prefetch, right before its compute
    CHECK(rg.op(gather).attr(Attr::message_bytes) == static_cast<int64_t>(c.fc2_gathered));
    CHECK(rg.op(gather).attr(Attr::comm_stream) == kFsdpAllGatherStream);
    const auto back = rl_uses(rg, rl_named(rg, "fc2.weight.regathered").id);
    CHECK(back.first == rl_collective(rg, OpKind::AllGather, "fc2", Phase::Backward));
    CHECK(rg.op(rg.op(back.second).forward_op).block == 1);
    // The unsharded gradient is freed at the unit's post-backward (its last backward op), where the
    // reduce-scatter input is made; the reduce-scatter, right after, writes the sharded gradient, which the
    // optimizer reads.
    const auto grad = rl_uses(rg, rl_named(rg, "grad.fc2.weight").id);
    CHECK(grad.second == back.second);
    const OpId reduce = rl_collective(rg, OpKind::ReduceScatter, "fc2", Phase::Backward);
    CHECK(reduce == back.second + 1);
    CHECK(rg.op(reduce).attr(Attr::comm_stream) == kFsdpReduceScatterStream);
    CHECK(rg.op(reduce).attr(Attr::message_bytes) == static_cast<int64_t>(c.fc2_gathered));  // fp32 reduce
    const auto gshard = rl_uses(rg, rl_named(rg, "fc2.weight.grad_shard").id);
    CHECK(gshard.first == reduce);
    CHECK(rg.op(gshard.second).phase == Phase::Optimizer);
    CHECK(rl_reads(rg.op(rl_first_optimizer_op(rg)), rl_named(rg, "fc1.weight.grad_shard").id));
    // Backward prefetch: fc1's backward all-gather is issued with fc2's, before fc2's first backward op.
    const OpId fc1_again = rl_collective(rg, OpKind::AllGather, "fc1", Phase::Backward);
    CHECK(fc1_again == back.first + 1);
    CHECK(rg.op(fc1_again + 1).phase == Phase::Backward);
    CHECK(rg.op(rg.op(fc1_again + 1).forward_op).block == 1);
    CHECK(rl_named(rg, "fc2.weight.grad_shard").bytes == rl_named(rg, "fc2.weight.shard").bytes);
    // Two all-gathers and a reduce-scatter per unit.
    CHECK(r.collectives.size() == 6);
  }
}

TEST_CASE("FSDP without resharding, in bf16: one gather per unit held through backward, bf16 bytes") {
  ParallelLayout p = rl_layout(Layout::Fsdp, 2);
  p.reshard_after_forward = false;
  p.param_dtype = DType::BF16;
  const RankLocalGraph r = rank_local_graph(rl_mlp_training_graph(), p);
  const Graph& rg = r.graph;
  CHECK(rl_named(rg, "fc2.weight").bytes == 258 * 1024 * 2);
  CHECK(rl_named(rg, "fc2.weight").dtype == DType::BF16);
  CHECK(rl_named(rg, "grad.fc2.weight").bytes == 257 * 1024 * 2);  // autograd's, unpadded, in bf16
  CHECK(rl_named(rg, "fsdp.reduce_scatter_input.fc2").bytes == 258 * 1025 * 2);  // reduce in the param dtype
  CHECK(rg.op(rl_collective(rg, OpKind::ReduceScatter, "fc2", Phase::Backward)).attr(Attr::message_bytes) ==
        258 * 1025 * 2);
  for (const Tensor& t : rg.tensors()) CHECK(t.name.find(".regathered") == std::string::npos);
  const auto life = rl_uses(rg, rl_named(rg, "fc2.weight").id);
  CHECK(rg.op(life.first).phase == Phase::Forward);
  CHECK(rg.op(life.second).phase == Phase::Backward);
  CHECK(rl_named(rg, "fc2.weight.shard").dtype == DType::F32);  // the shard keeps fp32 masters
  CHECK(r.collectives.size() == 4);
}

TEST_CASE("ZeRO-1 and ZeRO-2 on 4 ranks: state sharded, gradients sharded at stage 2") {
  const Graph g = rl_mlp_training_graph();
  ParallelLayout p = rl_layout(Layout::Zero, 4);
  // Rank 0's state rows: fc1 256 rows (262144 + 1024 B), fc2 65 rows (266240 + 260 B): 529668 per moment.
  p.zero_stage = 1;
  const RankLocalGraph z1 = rank_local_graph(g, p);
  auto m = rl_persistent_bytes(z1);
  CHECK(m.at(MemoryCategory::Weights) == rl_kParams);
  CHECK(m.at(MemoryCategory::OptimizerState) == 2 * 529668);
  CHECK(m.at(MemoryCategory::CommunicationBuckets) == rl_kParams);
  p.zero_stage = 2;
  const RankLocalGraph z2 = rank_local_graph(g, p);
  m = rl_persistent_bytes(z2);
  CHECK(m.at(MemoryCategory::OptimizerState) == 2 * 529668);
  CHECK(m.count(MemoryCategory::CommunicationBuckets) == 0);  // transient at stage 2
  CHECK(rl_named(z2.graph, "zero.bucket.0").bytes == 1053700);
  CHECK(rl_named(z2.graph, "fc2.weight.grad_shard").bytes == 266240);
  const auto full = rl_uses(z2.graph, rl_named(z2.graph, "grad.fc2.weight").id);
  CHECK(z2.graph.op(full.second).phase == Phase::Backward);  // freed once its bucket is reduce-scattered
  // Stage 1: the buckets all-reduced; stage 2: reduce-scattered into the gradients' partitions, freed there. Both:
  // the updated parameters all-gathered after the last update, in place.
  std::map<OpKind, int> z1_kinds, z2_kinds;
  for (const Op& o : z1.graph.ops()) ++z1_kinds[o.kind];
  for (const Op& o : z2.graph.ops()) ++z2_kinds[o.kind];
  CHECK(z1_kinds[OpKind::AllReduce] == 2);
  CHECK(z2_kinds[OpKind::AllReduce] == 0);
  CHECK(z2_kinds[OpKind::ReduceScatter] == 2);
  CHECK(z1_kinds[OpKind::AllGather] == 1);
  const OpId rs = rl_collective(z2.graph, OpKind::ReduceScatter, "zero.bucket.0", Phase::Backward);
  CHECK(rl_writes(z2.graph.op(rs), rl_named(z2.graph, "fc2.weight.grad_shard").id));
  CHECK(rl_uses(z2.graph, rl_named(z2.graph, "zero.bucket.0").id).second == rs);
  const Op& gather = z2.graph.ops().back();
  CHECK(gather.kind == OpKind::AllGather);
  CHECK(gather.phase == Phase::Optimizer);
  CHECK(gather.attr(Attr::message_bytes) == static_cast<int64_t>(rl_kParams));
}
