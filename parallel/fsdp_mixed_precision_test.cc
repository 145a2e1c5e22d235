// FSDP2's MixedPrecisionPolicy on the two-layer MLP of rank_local_graph_test.cc (Linear(256, 1024) -> ReLU ->
// Linear(1024, 257), batch 8, AdamW, each layer a block), on 2 ranks, every byte count worked by hand below:
//  - under autocast (mixed-bf16), the casts of the gathered bf16 parameters copy nothing and are gone;
//  - computing in bf16 (the graph built in bf16, shards kept fp32: experiment/parallel_precision.h), the bytes of
//    the shards, gathered parameters, activations, unsharded and sharded gradients and reduce-scatter buffers.
#include "parallel/rank_local_graph.h"

#include <catch2/catch.hpp>

#include <map>

#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::parallel;

namespace {

Graph mp_mlp(Precision precision) {
  TrainingOptions t;
  t.optimizer = Optimizer::AdamW;
  t.precision = precision;
  ModelBuilder b("mlp", 8, build_options(t));
  TensorId x = b.input({8, 256}, DType::F32);
  b.begin_block("fc1");
  x = b.linear(x, 1024, true, "fc1");
  b.end_block();
  x = b.relu(x, true, "relu");
  b.begin_block("fc2");
  x = b.linear(x, 257, true, "fc2");
  b.end_block();
  b.cross_entropy_loss(x);
  return make_training_graph(b.finish(), t);
}

ParallelLayout mp_fsdp2() {
  ParallelLayout p;
  p.layout = Layout::Fsdp;
  p.ranks = 2;
  p.param_dtype = DType::BF16;
  p.reduce_dtype = DType::F32;
  return p;
}

const Tensor& mp_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors())
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  return g.tensors().front();
}

bool mp_used(const Graph& g, TensorId t) {
  for (const Op& o : g.ops()) {
    for (TensorId i : o.inputs) if (i == t) return true;
    for (TensorId i : o.outputs) if (i == t) return true;
  }
  return false;
}

// The phases of the ops that use t, first and last.
std::pair<Phase, Phase> mp_life(const Graph& g, TensorId t) {
  OpId first = -1, last = -1;
  for (const Op& o : g.ops()) {
    bool used = false;
    for (TensorId i : o.inputs) used |= i == t;
    for (TensorId i : o.outputs) used |= i == t;
    if (!used) continue;
    if (first < 0) first = o.id;
    last = o.id;
  }
  REQUIRE(first >= 0);
  return {g.op(first).phase, g.op(last).phase};
}

int mp_casts(const Graph& g, bool same_dtype) {
  int n = 0;
  for (const Op& o : g.ops())
    if (o.kind == OpKind::Copy && o.has_attr(Attr::cast) && o.attr(Attr::cast) != 0 &&
        (g.tensor(o.inputs[0]).dtype == g.tensor(o.outputs[0]).dtype) == same_dtype)
      ++n;
  return n;
}

uint64_t mp_sum(const Graph& g, const std::string& suffix) {
  uint64_t b = 0;
  for (const Tensor& t : g.tensors())
    if (t.name.ends_with(suffix) && mp_used(g, t.id)) b += t.bytes;
  return b;
}

}  // namespace

TEST_CASE("FSDP bf16 under autocast: no cast copies a gathered bf16 parameter or its bf16 gradient") {
  const Graph training = mp_mlp(Precision::MixedBF16);
  // Autocast casts each fp32 weight and bias to bf16 once (4 forward casts), and each of their bf16 gradients
  // back to fp32 (4 backward casts), besides the input's and the loss's casts.
  const int before = mp_casts(training, false);
  CHECK(mp_casts(training, true) == 0);
  const RankLocalGraph r = rank_local_graph(training, mp_fsdp2());
  const Graph& g = r.graph;
  CHECK(mp_casts(g, true) == 0);
  CHECK(mp_casts(g, false) == before - 8);
  for (const char* p : {"fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"}) {
    INFO(p);
    const Tensor& w = mp_named(g, p);
    CHECK(w.dtype == DType::BF16);
    CHECK_FALSE(mp_used(g, mp_named(g, std::string(p) + ".bf16").id));  // autocast's copy is gone
    // The gathered copy is read by the forward only (resharded after forward); the backward reads the regather.
    CHECK(mp_life(g, w.id) == std::pair{Phase::Forward, Phase::Forward});
    CHECK(mp_life(g, mp_named(g, std::string(p) + ".regathered").id) == std::pair{Phase::Backward, Phase::Backward});
    // Autograd writes the unsharded gradient in bf16 itself (no bf16 -> fp32 cast): its writer is no Copy.
    const Tensor& grad = mp_named(g, std::string("grad.") + p);
    CHECK(grad.dtype == DType::BF16);
    for (const Op& o : g.ops())
      for (TensorId t : o.outputs)
        if (t == grad.id) CHECK(o.kind != OpKind::Copy);
  }
  // The forward matmul reads the gathered parameter itself.
  bool reads = false;
  for (const Op& o : g.ops())
    if (o.phase == Phase::Forward && o.kind != OpKind::Copy)
      for (TensorId t : o.inputs) reads |= t == mp_named(g, "fc2.weight").id;
  CHECK(reads);
  // The shards keep the model's fp32 (the training graph's weights under autocast).
  CHECK(mp_named(g, "fc2.weight.shard").dtype == DType::F32);
  CHECK(mp_named(g, "fc2.weight.shard").bytes == 129 * 1024 * 4);
}

TEST_CASE("FSDP computing in bf16 (param_dtype bf16, reduce_dtype fp32, fp32 shards): every byte by hand") {
  ParallelLayout p = mp_fsdp2();
  p.shard_dtype = DType::F32;
  const RankLocalGraph r = rank_local_graph(mp_mlp(Precision::BF16), p);
  const Graph& g = r.graph;
  CHECK(mp_casts(g, true) == 0);
  // Shards, fp32, rank 0's full chunk of ceil(rows / 2) rows: fc1.weight 512 x 256, fc1.bias 512, fc2.weight
  // 129 x 1024, fc2.bias 129.
  const uint64_t shards = 512 * 256 * 4 + 512 * 4 + 129 * 1024 * 4 + 129 * 4;  // 1055236
  CHECK(mp_sum(g, ".shard") == shards);
  CHECK(mp_named(g, "fc1.weight.shard").dtype == DType::F32);
  // The sharded gradients: the reduce-scatter's fp32 output, the shards' size and dtype.
  CHECK(mp_sum(g, ".grad_shard") == shards);
  CHECK(mp_named(g, "fc2.weight.grad_shard").dtype == DType::F32);
  // AdamW's two moments follow the unpadded local rows (rank 0: the full chunk), in fp32.
  CHECK(mp_sum(g, ".exp_avg") == shards);
  CHECK(mp_sum(g, ".exp_avg_sq") == shards);
  CHECK(mp_named(g, "fc2.weight.exp_avg").dtype == DType::F32);
  // Gathered parameters, bf16, padded to 2 chunks: fc1 1024 x 256 + 1024, fc2 258 x 1024 + 258.
  CHECK(mp_named(g, "fc1.weight").bytes == 1024 * 256 * 2);
  CHECK(mp_named(g, "fc2.weight").bytes == 258 * 1024 * 2);
  CHECK(mp_named(g, "fc2.bias").bytes == 258 * 2);
  std::map<std::string, uint64_t> gathered;
  for (const CollectiveSite& c : r.collectives)
    if (c.kind == CollectiveKind::AllGather && c.phase == Phase::Forward) gathered[c.unit] = c.bytes;
  CHECK(gathered.at("fc1") == (1024 * 256 + 1024) * 2);  // 526336
  CHECK(gathered.at("fc2") == (258 * 1024 + 258) * 2);   // 528900
  // Autograd's unsharded gradients, bf16, unpadded.
  CHECK(mp_named(g, "grad.fc1.weight").bytes == 1024 * 256 * 2);
  CHECK(mp_named(g, "grad.fc2.weight").bytes == 257 * 1024 * 2);
  CHECK(mp_named(g, "grad.fc2.bias").bytes == 257 * 2);
  // The reduce-scatter input: the unit's padded unsharded size in reduce_dtype fp32.
  CHECK(mp_named(g, "fsdp.reduce_scatter_input.fc1").bytes == (1024 * 256 + 1024) * 4);  // 1052672
  CHECK(mp_named(g, "fsdp.reduce_scatter_input.fc2").bytes == 258 * 1025 * 4);           // 1057800
  for (const CollectiveSite& c : r.collectives)
    if (c.kind == CollectiveKind::ReduceScatter && c.unit == "fc2") CHECK(c.bytes == 258 * 1025 * 4);
  // Activations in bf16: every forward op's output is bf16 but the fp32 input's and the loss's.
  int bf16_outputs = 0;
  for (const Op& o : g.ops()) {
    if (o.phase != Phase::Forward || is_collective(o.kind)) continue;
    for (TensorId t : o.outputs) bf16_outputs += g.tensor(t).dtype == DType::BF16;
  }
  CHECK(bf16_outputs >= 3);  // the input's bf16 copy, fc1's and fc2's outputs at least
  for (const Op& o : g.ops())
    if (o.phase == Phase::Forward && o.name == "fc1") {
      CHECK(g.tensor(o.outputs[0]).dtype == DType::BF16);
      CHECK(g.tensor(o.outputs[0]).bytes == 8 * 1024 * 2);
    }
}
