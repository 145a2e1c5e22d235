#include "workloads/training.h"

#include <catch2/catch.hpp>
#include <set>

#include "common/config_error.h"
#include "workloads/model_builder.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

std::set<std::string> saved_names(const Graph& t) {
  std::set<TensorId> fwd_out;
  std::set<std::string> saved;
  for (const Op& o : t.ops())
    if (o.phase == Phase::Forward) fwd_out.insert(o.outputs.begin(), o.outputs.end());
  for (const Op& o : t.ops())
    if (o.phase == Phase::Backward)
      for (TensorId i : o.inputs)
        if (fwd_out.count(i) && t.tensor(i).kind == TensorKind::Activation) saved.insert(t.tensor(i).name);
  return saved;
}

const Op* find_op(const Graph& g, OpKind k) {
  for (const Op& o : g.ops())
    if (o.kind == k) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("backward keeps exactly autograd's saved tensors") {
  ModelBuilder b("small", 2);
  TensorId x = b.input({2, 3, 8, 8}, DType::F32);
  x = b.relu(b.batch_norm(b.conv2d(x, 4, 3, 1, 1, 1, false, "conv"), "bn"), true, "relu");
  x = b.max_pool(x, 2, 2, 0, false, "pool");
  x = b.dropout(b.flatten(x, "flatten"), 0.5, "drop");
  b.cross_entropy_loss(b.linear(x, 10, true, "fc"));
  Graph f = b.finish();
  Graph t = make_training_graph(f, TrainingOptions{});
  // conv keeps its input (the batch: excluded), bn its input and statistics, the in-place relu its output
  // (bn.out, overwritten), max-pool its input (the same) and indices, dropout its mask, fc its input, the
  // loss its log-probabilities.
  CHECK(saved_names(t) == std::set<std::string>{"conv.out", "bn.save_mean", "bn.save_invstd", "bn.out",
                                                "pool.indices", "drop.mask", "drop.out", "loss.log_probs"});
  CHECK(find_op(t, OpKind::Flatten) == nullptr);  // the view is elided
  const Op* fc = find_op(t, OpKind::Linear);
  REQUIRE(fc != nullptr);
  CHECK(t.tensor(fc->inputs[0]).name == "drop.out");
  const Op* drop = find_op(t, OpKind::Dropout);
  CHECK(t.tensor(drop->inputs[0]).name == "pool.out");  // reads the pooled tensor, not a flattened copy
  // The first conv's input needs no gradient: no backward-data op.
  CHECK(find_op(t, OpKind::Conv2dBwdData) == nullptr);
  const Op* bf = find_op(t, OpKind::Conv2dBwdFilter);
  REQUIRE(bf != nullptr);
  CHECK(t.op(bf->forward_op).kind == OpKind::Conv2d);
  CHECK(bf->workspace != kNoTensor);
  CHECK(t.tensor(bf->workspace).kind == TensorKind::Workspace);
  // Learnable: conv weight, bn gamma/beta, fc weight/bias; not the running statistics.
  size_t updates = 0;
  for (const Op& o : t.ops()) updates += o.kind == OpKind::SgdMomentumUpdate;
  CHECK(updates == 5);
  // Ops carry bytes and FLOPs.
  for (const Op& o : t.ops()) {
    INFO(o.name);
    CHECK(o.bytes_read + o.bytes_written > 0);
  }
}

TEST_CASE("gradients meeting at a tensor are summed in place when unshared") {
  ModelBuilder b("fork", 1);
  TensorId x = b.input({1, 4, 6, 6}, DType::F32);
  TensorId h = b.conv2d(x, 4, 3, 1, 1, 1, false, "stem");
  TensorId l = b.conv2d(h, 4, 3, 1, 1, 1, false, "left");
  TensorId r = b.conv2d(h, 4, 3, 1, 1, 1, false, "right");
  TensorId s = b.add(l, r, false, "sum");
  b.cross_entropy_loss(b.linear(b.flatten(s), 3, true, "fc"));
  Graph t = make_training_graph(b.finish(), TrainingOptions{});
  const Op* acc = find_op(t, OpKind::GradAccumulate);
  REQUIRE(acc != nullptr);
  CHECK(t.tensor(acc->inputs[0]).name == "grad.stem.out");
  REQUIRE(acc->outputs.size() == 1);
  CHECK(acc->outputs[0] == acc->inputs[0]);  // in place: the first gradient was not shared
  // The add's gradient reaches both convolutions as one tensor (AddBackward0 passes it through).
  std::vector<TensorId> dys;
  for (const Op& o : t.ops())
    if (o.kind == OpKind::Conv2dBwdData) dys.push_back(o.inputs[0]);
  REQUIRE(dys.size() == 2);
  CHECK(dys[0] == dys[1]);
}

TEST_CASE("forward graphs without a loss or with bad references are rejected") {
  ModelBuilder b("noloss", 1);
  TensorId x = b.input({1, 3, 4, 4}, DType::F32);
  b.conv2d(x, 2, 3, 1, 1);
  CHECK_THROWS_AS(make_training_graph(b.finish(), TrainingOptions{}), ConfigError);
  Graph g;
  g.name = "broken";
  Op o;
  o.kind = OpKind::Relu;
  o.inputs = {7};
  o.outputs = {7};
  g.add_op(o);
  CHECK_THROWS_AS(make_training_graph(g, TrainingOptions{}), ConfigError);
}

TEST_CASE("in-place ReLU6 keeps a clone of its input, as PyTorch 1.13's hardtanh_ does") {
  ModelBuilder b("r6", 1);
  TensorId x = b.input({1, 3, 4, 4}, DType::F32);
  TensorId y = b.relu6(b.batch_norm(b.conv2d(x, 2, 3, 1, 1, 1, false, "c"), "bn"), true, "act");
  b.cross_entropy_loss(b.linear(b.flatten(y), 2, true, "fc"));
  Graph t = make_training_graph(b.finish(), TrainingOptions{});
  CHECK(saved_names(t).count("act.saved_input") == 1);
  CHECK(saved_names(t).count("bn.out") == 1);  // the relu6 output (bn.out, in place) is kept by fc
}

TEST_CASE("conv_workspace=false leaves convolutions without workspace") {
  ModelOptions o;
  o.batch = 1;
  o.training.conv_workspace = false;
  Graph t = build_training_graph("resnet18", o);
  for (const Op& op : t.ops())
    if (op.kind == OpKind::Conv2d || op.kind == OpKind::Conv2dBwdData || op.kind == OpKind::Conv2dBwdFilter)
      CHECK(op.workspace == kNoTensor);
}

TEST_CASE("mixed-fp16 scales the loss and unscales every weight gradient before the step, mixed-bf16 does not") {
  ModelOptions o;
  o.batch = 2;
  o.training.precision = Precision::MixedFP16;
  const Graph g = build_training_graph("resnet18", o);
  const Op* scale = nullptr;
  const Op* unscale = nullptr;
  size_t grads = 0;
  for (const Op& op : g.ops()) {
    if (op.kind == OpKind::Mul && op.has_attr(Attr::amp_scale_loss)) scale = &op;
    if (op.other == OtherOp::AmpUnscale) unscale = &op;
    grads += op.kind == OpKind::SgdMomentumUpdate;
  }
  REQUIRE(scale != nullptr);
  CHECK(scale->phase == Phase::Forward);
  CHECK(scale->bytes_written == 4);  // one fp32 element
  REQUIRE(unscale != nullptr);
  CHECK(unscale->phase == Phase::Optimizer);
  CHECK(unscale->inputs.size() == grads);  // in place, one multi-tensor op over every weight gradient
  CHECK(unscale->outputs == unscale->inputs);
  for (const Tensor& t : g.tensors())
    if (t.learnable) CHECK(t.dtype == DType::F32);  // fp32 masters
  o.training.precision = Precision::MixedBF16;
  const Graph mixed_bf16 = build_training_graph("resnet18", o);
  for (const Op& op : mixed_bf16.ops()) {
    CHECK_FALSE((op.kind == OpKind::Mul && op.has_attr(Attr::amp_scale_loss)));
    CHECK(op.other != OtherOp::AmpUnscale);
  }
  // A model held in bf16: weights, optimizer state and activations all bf16, and nothing cast but the image.
  o.training.precision = Precision::BF16;
  const Graph b = build_training_graph("resnet18", o);
  size_t casts = 0;
  for (const Op& op : b.ops()) casts += op.kind == OpKind::Copy && op.has_attr(Attr::cast);
  CHECK(casts == 1);
  for (const Tensor& t : b.tensors())
    if (t.learnable || t.kind == TensorKind::OptimizerState) CHECK(t.dtype == DType::BF16);
}

TEST_CASE("AdamW keeps Adam's state and moves its bytes (foreach: and its decay's pass), with the decay's arithmetic") {
  auto graph = [](Optimizer opt, Kernels k) {
    ModelOptions o;
    o.batch = 2;
    o.training.optimizer = opt;
    o.training.kernels = k;
    return build_training_graph("cifar-resnet20", o);
  };
  for (Kernels k : {Kernels::Eager, Kernels::Fused}) {
    const Graph adam = graph(Optimizer::Adam, k), adamw = graph(Optimizer::AdamW, k);
    REQUIRE(adam.ops().size() == adamw.ops().size());
    REQUIRE(adam.tensors().size() == adamw.tensors().size());
    size_t steps = 0;
    for (size_t i = 0; i < adam.ops().size(); ++i) {
      const Op &a = adam.ops()[i], &w = adamw.ops()[i];
      CHECK(a.kind == w.kind);
      // the foreach step's one more pass: _foreach_mul_(params, 1 - lr * wd) reads and writes each parameter
      const uint64_t decay = k == Kernels::Eager && a.kind == OpKind::AdamUpdate ? adam.tensor(a.inputs[0]).bytes : 0;
      CHECK(a.bytes_read + decay == w.bytes_read);
      CHECK(a.bytes_written + decay == w.bytes_written);
      if (a.kind != OpKind::AdamUpdate) continue;
      ++steps;
      CHECK(w.attr(Attr::adamw) == 1);
      CHECK_FALSE(a.has_attr(Attr::adamw));
      CHECK(w.flops == Approx(a.flops * 14 / 12));
    }
    CHECK(steps > 0);
  }
  CHECK(std::string(to_string(Optimizer::AdamW)) == "adamw");
  CHECK(choice_named("adamw", kOptimizers) == Optimizer::AdamW);
}
