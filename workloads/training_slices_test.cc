// torch.split's views in the training synthesis (training_slices.cc): GPT-2's c_attn in small.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>

#include "common/config_error.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;

namespace {

constexpr int64_t kB = 2, kS = 8, kHeads = 2, kD = 8, kH = kHeads * kD;

// x -> linear to 3H -> split into three (B, S, H) slices -> (B, heads, S, d) views -> flash attention -> loss.
// `use` picks which slice each of q, k, v reads.
Graph attention_graph(std::array<int, 3> use) {
  ModelBuilder b("qkv", kB);
  TensorId x = b.input({kB, kS, kH}, DType::F32, "x");
  const std::vector<TensorId> s = b.split(b.linear(x, 3 * kH, true, "c_attn"), 3, -1, "split");
  auto view = [&](int i, const std::string& n) { return b.reshape(s.at(static_cast<size_t>(i)), {kB, kHeads, kS, kD}, n); };
  TensorId o = b.flash_attention(view(use[0], "q"), view(use[1], "k"), view(use[2], "v"), true, "sdpa");
  b.cross_entropy_loss(b.linear(b.flatten(o, "flat"), 4, true, "head"), "loss");
  return b.finish();
}

const Op& only_op(const Graph& g, OpKind k, Phase p) {
  const Op* found = nullptr;
  for (const Op& o : g.ops())
    if (o.kind == k && o.phase == p) {
      REQUIRE(found == nullptr);
      found = &o;
    }
  REQUIRE(found != nullptr);
  return *found;
}

}  // namespace

TEST_CASE("split: equal slices along an axis, as views, and a split that does not divide is an error") {
  ModelBuilder b("s", kB);
  TensorId x = b.input({kB, kS, 3 * kH}, DType::F32, "x");
  const std::vector<TensorId> s = b.split(x, 3, 2, "split");
  REQUIRE(s.size() == 3);
  for (TensorId t : s) CHECK(b.graph().tensor(t).shape == std::vector<int64_t>{kB, kS, kH});
  const Op& op = b.graph().ops().back();
  CHECK(op.kind == OpKind::Other);
  CHECK(op.other == OtherOp::Split);
  CHECK(op.attr(Attr::axis) == 2);
  CHECK_THROWS_AS(b.split(x, 5, 2, "bad"), ConfigError);
  CHECK_THROWS_AS(b.split(x, 3, 3, "bad_axis"), ConfigError);
}

TEST_CASE("a split's slices read the split tensor, whose gradient is the cat of the slices' gradients") {
  const Graph t = make_training_graph(attention_graph({0, 1, 2}), TrainingOptions{});
  const Op* c_attn = nullptr;
  for (const Op& o : t.ops())
    if (o.name == "c_attn") c_attn = &o;
  REQUIRE(c_attn != nullptr);
  const TensorId qkv = c_attn->outputs[0];
  const uint64_t slice = static_cast<uint64_t>(kB * kS * kH * 4);
  CHECK(t.tensor(qkv).bytes == 3 * slice);  // one tensor of (B, S, 3H)
  for (const Op& o : t.ops()) CHECK_FALSE(o.other == OtherOp::Split);  // elided

  // The attention reads (and its backward keeps) the split tensor itself: its storage lives until then.
  const Op& fwd = only_op(t, OpKind::FlashAttention, Phase::Forward);
  CHECK(fwd.inputs == std::vector<TensorId>{qkv, qkv, qkv});
  const Op& bwd = only_op(t, OpKind::FlashAttentionBwd, Phase::Backward);
  CHECK(std::count(bwd.inputs.begin(), bwd.inputs.end(), qkv) == 3);
  // ... but counts the bytes of the three slices it reads, not three times the whole
  const uint64_t gy = t.tensor(bwd.inputs[0]).bytes, out = t.tensor(fwd.outputs[0]).bytes, lse = t.tensor(fwd.outputs[1]).bytes;
  CHECK(bwd.bytes_read == gy + 3 * slice + out + lse);
  // Three slice-shaped gradients, joined by one cat along the split's axis into c_attn's output gradient.
  REQUIRE(bwd.outputs.size() == 3);
  for (TensorId g : bwd.outputs) {
    CHECK(t.tensor(g).shape == std::vector<int64_t>{kB, kS, kH});
    CHECK(t.tensor(g).kind == TensorKind::Gradient);
  }
  const Op& cat = only_op(t, OpKind::Concat, Phase::Backward);
  CHECK(cat.name == "split.bwd");
  CHECK(cat.inputs == bwd.outputs);
  CHECK(cat.attr(Attr::axis) == 2);
  REQUIRE(cat.outputs.size() == 1);
  CHECK(t.tensor(cat.outputs[0]).shape == t.tensor(qkv).shape);
  CHECK(t.tensor(cat.outputs[0]).grad_of == qkv);
  CHECK(cat.forward_op == c_attn->id);
  bool read_by_c_attn_bwd = false;  // its weight's gradient (x, an input, needs none)
  for (const Op& o : t.ops())
    if (o.kind == OpKind::LinearBwdWeight && o.forward_op == c_attn->id)
      read_by_c_attn_bwd = o.inputs.at(0) == cat.outputs[0];
  CHECK(read_by_c_attn_bwd);
}

TEST_CASE("a slice read twice sums its gradients, and a slice nobody reads gets zeros in the cat") {
  const Graph t = make_training_graph(attention_graph({0, 1, 1}), TrainingOptions{});
  const Op& bwd = only_op(t, OpKind::FlashAttentionBwd, Phase::Backward);
  const Op& cat = only_op(t, OpKind::Concat, Phase::Backward);
  REQUIRE(cat.inputs.size() == 3);
  CHECK(cat.inputs[0] == bwd.outputs[0]);
  CHECK(cat.inputs[1] == bwd.outputs[1]);  // k's gradient, v's added into it
  const Op& acc = only_op(t, OpKind::GradAccumulate, Phase::Backward);
  CHECK(acc.inputs == std::vector<TensorId>{bwd.outputs[1], bwd.outputs[2]});
  CHECK(acc.outputs == std::vector<TensorId>{bwd.outputs[1]});
  const Op& zeros = only_op(t, OpKind::Other, Phase::Backward);
  CHECK(zeros.other == OtherOp::Fill);
  CHECK(zeros.outputs == std::vector<TensorId>{cat.inputs[2]});
  CHECK(t.tensor(cat.inputs[2]).shape == std::vector<int64_t>{kB, kS, kH});
}

TEST_CASE("a slice read by an op whose backward does not count slices is refused, naming the op") {
  ModelBuilder b("qkv", kB);
  TensorId x = b.input({kB, kS, kH}, DType::F32, "x");
  const std::vector<TensorId> s = b.split(b.linear(x, 3 * kH, true, "c_attn"), 3, 2, "split");
  b.cross_entropy_loss(b.linear(b.flatten(s[0], "flat"), 4, true, "head"), "loss");
  try {
    make_training_graph(b.finish(), TrainingOptions{});
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("head") && Catch::Contains("only FlashAttention"));
  }
}
