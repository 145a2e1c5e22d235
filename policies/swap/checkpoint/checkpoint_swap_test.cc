// The checkpoint and sqrt policies: a chain of four blocks whose plans and saved bytes are worked out by hand,
// the segments of the zoo's models, bad parameters, and the figures against PyTorch's own
// torch.utils.checkpoint(use_reentrant=False) (workloads/testdata/torch_checkpoint.json, measured by
// validate/torch/torch_checkpoint_bytes.py).
#include "policies/swap/checkpoint/checkpoint_swap.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <fstream>

#include "common/config_error.h"
#include "policies/swap/core/saved_bytes.h"
#include "policies/swap/testing/swap_graphs.h"
#include "workloads/model_builder.h"
#include "workloads/zoo.h"
#include "policies/concurrency/concurrency_policy.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// Four blocks, each linear (no bias) then a ReLU out of place, on one row of 1024 floats (S = 4096 bytes per
// activation), then cross entropy over the 1024 "classes":
//   x -> [lin0 -> l0, relu0 -> h1] -> [lin1, relu1 -> h2] -> [lin2, relu2 -> h3] -> [lin3, relu3 -> h4] -> loss
// A linear keeps its input, a ReLU its output, the loss its log-probabilities L; x is the input (not counted).
// The linears' outputs l_i are kept by no one. Without checkpointing the backward pass starts with h1..h4 and L:
// 5 S, and that is also its peak.
struct Chain {
  static constexpr uint64_t S = 4096;
  Graph g;
  std::vector<OpId> order;
  Chain() {
    ModelBuilder b("chain", 1);
    TensorId h = b.input({1, 1024}, DType::F32, "x");
    for (int i = 0; i < 4; ++i) {
      const std::string n = "block" + std::to_string(i);
      b.begin_block(n);
      h = b.relu(b.linear(h, 1024, false, n + ".lin"), false, n + ".relu");
      b.end_block();
    }
    b.cross_entropy_loss(h, "loss");
    TrainingOptions t;
    g = make_training_graph(b.finish(), t);
    for (const Op& o : g.ops()) order.push_back(o.id);
  }
  int pos(const std::string& name) const {
    for (size_t p = 0; p < order.size(); ++p)
      if (g.op(order[p]).name == name) return static_cast<int>(p);
    FAIL("no op " << name);
    return -1;
  }
  TensorId tensor(const std::string& name) const {
    for (const Tensor& t : g.tensors())
      if (t.name == name) return t.id;
    FAIL("no tensor " << name);
    return kNoTensor;
  }
  OpId op(const std::string& name) const { return order[static_cast<size_t>(pos(name))]; }
  SwapResult plan(SwapPolicy& p) const {
    Schedule s = serial_schedule_of(g);
    IterationProfile none;
    return p.plan({g, s, none, TestLink(), 1 << 30, nullptr});
  }
};

CheckpointOptions every(int64_t k) {
  CheckpointOptions o;
  o.every = k;
  return o;
}

std::vector<TensorId> dropped(const Recomputation& r) {
  std::vector<TensorId> v;
  for (const auto& d : r.drops) {
    CHECK(d.free_after == -1);
    v.push_back(d.tensor);
  }
  return v;
}

}  // namespace

TEST_CASE("the hand-checked chain: no plan keeps every block output and the log-probabilities") {
  const Chain c;
  REQUIRE(c.g.blocks.size() == 4);
  const SavedBytes s = saved_bytes(c.g, c.order, {});
  CHECK(s.saved_for_backward_bytes == 5 * Chain::S);
  CHECK(s.backward_peak_saved_bytes == 5 * Chain::S);
  CHECK(s.saved_for_backward_bytes == summarize(c.g, c.g).saved_for_backward_bytes);
}

TEST_CASE("the hand-checked chain, every 2 blocks: two segments, each recomputed at its last ReLU's backward") {
  const Chain c;
  CheckpointSwap policy(every(2));
  const SwapResult r = c.plan(policy);
  REQUIRE(r.plan.recomputations.size() == 2);
  const Recomputation& a = r.plan.recomputations[0];  // blocks 0-1
  const Recomputation& b = r.plan.recomputations[1];  // blocks 2-3
  const TensorId h1 = c.tensor("block0.relu.out"), h2 = c.tensor("block1.relu.out");
  const TensorId h3 = c.tensor("block2.relu.out"), h4 = c.tensor("block3.relu.out");
  // What each segment writes and its own backward reads: the ReLU outputs (h2 is segment B's input: kept).
  CHECK(dropped(a) == std::vector<TensorId>{h1, h2});
  CHECK(dropped(b) == std::vector<TensorId>{h3, h4});
  // The first unpack: a segment's last ReLU's backward, the first of its backward ops to read a saved tensor.
  CHECK(a.before == c.pos("block1.relu.bwd"));
  CHECK(b.before == c.pos("block3.relu.bwd"));
  // The whole segment is replayed, in forward order.
  CHECK(a.ops == std::vector<OpId>{c.op("block0.lin"), c.op("block0.relu"), c.op("block1.lin"), c.op("block1.relu")});
  CHECK(b.ops == std::vector<OpId>{c.op("block2.lin"), c.op("block2.relu"), c.op("block3.lin"), c.op("block3.relu")});
  CHECK(r.report["replayed_ops"] == 8);
  // Forward leaves h2 (segment B's input) and L: 2 S. The loss's backward frees L, then B's recomputation brings
  // back h3 and h4 beside h2: 3 S, the peak; A's brings back h1 and h2 once h2's last reader in B is done: 2 S.
  const SavedBytes s = saved_bytes(c.g, c.order, r.plan);
  CHECK(s.saved_for_backward_bytes == 2 * Chain::S);
  CHECK(s.backward_peak_saved_bytes == 3 * Chain::S);
  CHECK(s.peak_position == b.before);
}

TEST_CASE("the hand-checked chain, every 1 and every 4 blocks: a peak of 4 S either way") {
  const Chain c;
  CheckpointSwap one(every(1)), all(every(4));
  const SwapResult r1 = c.plan(one), r4 = c.plan(all);
  REQUIRE(r1.plan.recomputations.size() == 4);
  REQUIRE(r4.plan.recomputations.size() == 1);
  // Every block: h1, h2, h3 stay as the next blocks' inputs, with L (h4 is recomputed: the loss keeps its
  // log-probabilities, not its input); at the last block's recomputation h4 comes back beside h1..h3.
  const SavedBytes s1 = saved_bytes(c.g, c.order, r1.plan);
  CHECK(s1.saved_for_backward_bytes == 4 * Chain::S);
  CHECK(s1.backward_peak_saved_bytes == 4 * Chain::S);
  // One segment of everything: only L is left; the recomputation brings back h1..h4 at once.
  const SavedBytes s4 = saved_bytes(c.g, c.order, r4.plan);
  CHECK(s4.saved_for_backward_bytes == Chain::S);
  CHECK(s4.backward_peak_saved_bytes == 4 * Chain::S);
  // every: K above the number of blocks is one segment of all of them.
  CheckpointSwap nine(every(9));
  CHECK(c.plan(nine).plan.recomputations.size() == 1);
}

TEST_CASE("sqrt picks round(sqrt(n)) blocks per segment: the chain's best uniform segmentation") {
  CHECK(sqrt_segment_blocks(1) == 1);
  CHECK(sqrt_segment_blocks(4) == 2);
  CHECK(sqrt_segment_blocks(8) == 3);
  CHECK(sqrt_segment_blocks(12) == 3);
  CHECK(sqrt_segment_blocks(16) == 4);
  CHECK(sqrt_segment_blocks(50) == 7);
  const Chain c;
  SqrtCheckpointSwap sqrt_policy;
  CheckpointSwap two(every(2));
  const SwapResult s = c.plan(sqrt_policy), t = c.plan(two);
  REQUIRE(s.plan.recomputations.size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(s.plan.recomputations[i].before == t.plan.recomputations[i].before);
    CHECK(s.plan.recomputations[i].ops == t.plan.recomputations[i].ops);
  }
}

TEST_CASE("explicit segments: block ranges, blocks in none not checkpointed") {
  const Chain c;
  CheckpointOptions o;
  o.segments = "1-2";
  CheckpointSwap policy(o);
  const SwapResult r = c.plan(policy);
  REQUIRE(r.plan.recomputations.size() == 1);
  CHECK(dropped(r.plan.recomputations[0]) ==
        std::vector<TensorId>{c.tensor("block1.relu.out"), c.tensor("block2.relu.out")});
  CHECK(r.plan.recomputations[0].before == c.pos("block2.relu.bwd"));
  // Forward leaves h1 (the segment's input), h3 (block 3's input), h4 and L: 4 S.
  CHECK(saved_bytes(c.g, c.order, r.plan).saved_for_backward_bytes == 4 * Chain::S);
}

TEST_CASE("bad checkpoint parameters name the file, the line and the key") {
  const auto specs = CheckpointOptions::parameters().specs();
  auto read = [&](const std::string& yaml) { return params_from_yaml(specs, YAML::Load(yaml), "exp.yaml", "checkpoint", "swap"); };
  auto message = [&](const std::string& yaml) {
    try {
      read(yaml);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message("name: checkpoint\nevery: 0\n"), Catch::Contains("exp.yaml:2") && Catch::Contains("swap.every") &&
                                                          Catch::Contains(">= 1"));
  CHECK_THAT(message("name: checkpoint\nsegments: 3-1\n"), Catch::Contains("exp.yaml:2") && Catch::Contains("swap.segments"));
  CHECK_THAT(message("name: checkpoint\nsegments: 0-3,2-5\n"), Catch::Contains("swap.segments"));
  CHECK_THAT(message("name: checkpoint\nsegments: 0-,4\n"), Catch::Contains("swap.segments"));
  CHECK(read("name: checkpoint\nsegments: 0-3,4-7,9\n").get_string("segments") == "0-3,4-7,9");

  // A block the model lacks: known only once the model is built.
  const Chain c;
  CheckpointOptions o;
  o.segments = "2-4";
  CHECK_THROWS_WITH(checkpoint_segments(c.g, o), Catch::Contains("segments") && Catch::Contains("block 4") &&
                                                     Catch::Contains("4 blocks (0 = block0 .. 3 = block3)"));
}

TEST_CASE("a model without blocks: checkpoint refuses, sqrt falls back to the forward op chain") {
  ModelOptions mo;
  mo.batch = 2;
  const Graph vgg = build_training_graph("vgg16", mo);
  REQUIRE(vgg.blocks.empty());
  CHECK_THROWS_WITH(checkpoint_segments(vgg, every(2)), Catch::Contains("every") && Catch::Contains("no block structure"));
  // An ONNX import has no blocks either, even of a ResNet: the file holds no module structure the importer keeps.
  const Graph onnx = build_training_graph(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/onnx/resnet18.onnx", mo);
  CHECK(onnx.blocks.empty());
  CHECK_THROWS_WITH(checkpoint_segments(onnx, every(1)), Catch::Contains("every") && Catch::Contains("ONNX import"));
  CHECK_FALSE(sqrt_segments(onnx).empty());
  const std::vector<CheckpointSegment> segs = sqrt_segments(vgg);
  // Every forward op before the loss is in exactly one segment (an in-place ReLU with the op before it).
  size_t ops = 0;
  for (const auto& s : segs) ops += s.size();
  size_t fwd = 0;
  for (const Op& op : vgg.ops()) fwd += op.phase == Phase::Forward && op.kind != OpKind::CrossEntropyLoss;
  CHECK(ops == fwd);
  CHECK(segs.size() > 3);
  std::vector<OpId> order;
  for (const Op& op : vgg.ops()) order.push_back(op.id);
  const SavedBytes none = saved_bytes(vgg, order, {});
  const SavedBytes sq = saved_bytes(vgg, order, checkpoint_plan(vgg, order, segs));
  CHECK(sq.saved_for_backward_bytes < none.saved_for_backward_bytes / 2);
  CHECK(sq.backward_peak_saved_bytes < none.backward_peak_saved_bytes);
}

TEST_CASE("the zoo's blocks: ResNet basic and bottleneck blocks across stages, transformer layers") {
  ModelOptions mo;
  mo.batch = 1;
  mo.seq_len = 16;
  CHECK(build_training_graph("resnet18", mo).blocks.size() == 8);
  const Graph r50 = build_training_graph("resnet50", mo);
  REQUIRE(r50.blocks.size() == 16);
  CHECK(r50.blocks.front() == "layer1.0");
  CHECK(r50.blocks[3] == "layer2.0");
  CHECK(r50.blocks.back() == "layer4.2");
  CHECK(build_training_graph("resnet152", mo).blocks.size() == 50);
  CHECK(build_training_graph("bert-base", mo).blocks.size() == 12);
  CHECK(build_training_graph("gpt2-small", mo).blocks.size() == 12);
  CHECK(build_training_graph("cifar-resnet20", mo).blocks.size() == 9);
  // Only forward ops carry a block; the stem and the head carry none.
  int in_blocks = 0;
  for (const Op& o : r50.ops()) {
    if (o.phase != Phase::Forward) CHECK(o.block == -1);
    if (o.name == "conv1" || o.name == "fc") CHECK(o.block == -1);
    if (o.name == "layer2.0.downsample.0") CHECK(o.block == 3);
    in_blocks += o.block >= 0;
  }
  // A bottleneck block: conv, bn, relu twice, conv, bn, add, relu (10 ops); the first block of each stage has a
  // downsample conv and bn too.
  CHECK(in_blocks == 16 * 10 + 4 * 2);
}

TEST_CASE("without a plan the accounting is the zoo's saved_for_backward_bytes") {
  ModelOptions mo;
  mo.batch = 2;
  mo.seq_len = 32;
  for (const char* m : {"resnet18", "densenet121", "bert-base", "gpt2-small"}) {
    const Graph fwd = build_forward_graph(m, mo);
    const Graph g = make_training_graph(fwd, mo.training);
    std::vector<OpId> order;
    for (const Op& o : g.ops()) order.push_back(o.id);
    const SavedBytes s = saved_bytes(g, order, {});
    CHECK(s.saved_for_backward_bytes == summarize(fwd, g).saved_for_backward_bytes);
    CHECK(s.backward_peak_saved_bytes == s.saved_for_backward_bytes);
  }
}

TEST_CASE("checkpoint's two figures match PyTorch's torch.utils.checkpoint within 1%") {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_checkpoint.json");
  REQUIRE(in);
  const nlohmann::json ref = nlohmann::json::parse(in);
  int compared = 0;
  for (const auto& run : ref["runs"]) {
    const std::string model = run["model"];
    const int64_t k = run["every"];
    ModelOptions mo;
    mo.batch = run["batch"];
    if (run.contains("seq_len")) mo.seq_len = run["seq_len"];
    if (model == "gpt2-small") mo.attention = Attention::Eager;  // the measured module is the eager reference's
    const Graph g = build_training_graph(model, mo);
    std::vector<OpId> order;
    for (const Op& o : g.ops()) order.push_back(o.id);
    const SwapPlan plan = k == 0 ? SwapPlan{} : checkpoint_plan(g, order, checkpoint_segments(g, every(k)));
    const SavedBytes s = saved_bytes(g, order, plan);
    const double want_saved = run["saved_for_backward_bytes"], want_peak = run["backward_peak_saved_bytes"];
    INFO(model << " every " << k << ": saved " << s.saved_for_backward_bytes << " vs " << want_saved << ", peak "
               << s.backward_peak_saved_bytes << " vs " << want_peak);
    CHECK(static_cast<double>(s.saved_for_backward_bytes) == Approx(want_saved).epsilon(0.01));
    CHECK(static_cast<double>(s.backward_peak_saved_bytes) == Approx(want_peak).epsilon(0.01));
    ++compared;
  }
  CHECK(compared == 9);  // ResNet-50, BERT-base and GPT-2 small, each without, every 1 and every 2
}

TEST_CASE("a ResNet plan re-runs each in-place op right after the op that wrote its operand, as PyTorch does") {
  ModelOptions mo;
  mo.batch = 1;
  const Graph r18 = build_training_graph("resnet18", mo);
  const Schedule s = serial_schedule_of(r18);
  IterationProfile none;
  CheckpointSwap policy(every(1));
  const SwapPlan plan = policy.plan({r18, s, none, TestLink(), 1 << 30, nullptr}).plan;
  REQUIRE(plan.recomputations.size() == 8);
  // Each in-place op of a replay (a basic block's ReLU(inplace=True), `out += identity`) comes after an op of the
  // same replay that writes its operand: the lowering's condition for re-running it.
  int in_place = 0;
  for (const Recomputation& r : plan.recomputations)
    for (size_t k = 0; k < r.ops.size(); ++k) {
      const Op& op = r18.op(r.ops[k]);
      for (TensorId t : op.outputs) {
        if (r18.tensor(t).persistent || !std::count(op.inputs.begin(), op.inputs.end(), t)) continue;
        ++in_place;
        bool made_before = false;
        for (size_t e = 0; e < k; ++e)
          made_before |= std::count(r18.op(r.ops[e]).outputs.begin(), r18.op(r.ops[e]).outputs.end(), t) > 0;
        CHECK(made_before);
      }
    }
  CHECK(in_place > 0);
  CHECK(saved_bytes(r18, s.order, plan).saved_for_backward_bytes < saved_bytes(r18, s.order, {}).saved_for_backward_bytes);
}

TEST_CASE("under autocast a checkpointed segment's weight casts stay cached to the end of the forward pass") {
  // autocast caches a parameter's cast until its region exits (the loss); torch.utils.checkpoint drops what
  // autograd saves, not the cache. FSDP's parameters (param-offload) are views, whose casts are not cached.
  ModelOptions o;
  o.batch = 2;
  o.training.precision = Precision::MixedBF16;
  const Graph g = build_training_graph("cifar-resnet20", o);
  std::vector<OpId> order;
  int last_forward = -1;
  for (const Op& op : g.ops()) {
    if (op.phase == Phase::Forward) last_forward = static_cast<int>(order.size());
    order.push_back(op.id);
  }
  CheckpointOptions c;
  c.every = 1;
  const std::vector<CheckpointSegment> segments = checkpoint_segments(g, c);
  auto weight_cast = [&](TensorId t) {
    for (const Op& op : g.ops())
      if (!op.outputs.empty() && op.outputs[0] == t)
        return op.kind == OpKind::Copy && op.has_attr(Attr::cast) && g.tensor(op.inputs[0]).learnable;
    return false;
  };
  for (const bool cache : {true, false}) {
    INFO((cache ? "autocast cache" : "FSDP"));
    const SwapPlan plan = checkpoint_plan(g, order, segments, cache);
    int casts = 0, others = 0;
    for (const Recomputation& r : plan.recomputations)
      for (const Recomputation::Drop& d : r.drops) {
        if (weight_cast(d.tensor)) {
          ++casts;
          CHECK(d.free_after == (cache ? last_forward : -1));
        } else {
          ++others;
          CHECK(d.free_after < last_forward);
        }
      }
    CHECK(casts == 20);  // each basic block's two conv weights (9 blocks) and the two 1x1 shortcut convolutions
    CHECK(others > 0);
  }
}
