// The graph API's view of a convolution (conv_graph_spec.h), from translations of graphs the real builders make:
// NCHW fp32 and channels_last 16-bit, the three passes' roles, TF32 on and off.
#include <catch2/catch.hpp>

#include "validate/gpu/conv_graph_spec.h"
#include "validate/gpu/op_translation.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;

namespace {

const Op& spec_op(const Graph& g, const std::string& name) {
  for (const Op& o : g.ops())
    if (o.name == name) return o;
  FAIL("no op named " << name);
  throw 0;
}

// stem (1x1) -> relu -> conv (16 filters of 3x3 over 8 channels in 2 groups, stride 2, pad 1) -> pool -> fc:
// "conv" has all three passes.
Graph spec_net(const TrainingOptions& t) {
  ModelBuilder b("specs", 2, build_options(t));
  TensorId x = b.input({2, 8, 10, 10}, DType::F32);
  x = b.relu(b.conv2d(x, 8, 1, 1, 0, 1, false, "stem"));
  x = b.conv2d(x, 16, 3, 2, 1, 2, false, "conv");
  b.cross_entropy_loss(b.linear(b.flatten(b.adaptive_avg_pool(x, 1, 1, "pool")), 10, true, "fc"));
  return make_training_graph(b.finish(), t);
}

}  // namespace

TEST_CASE("conv graph spec: an fp32 NCHW convolution keeps logical dims, dense strides and grouped filters") {
  const Graph g = spec_net({});
  const ConvGraphSpec f = conv_graph_spec(translate_op(g, spec_op(g, "conv")), 0);
  CHECK(f.pass == ConvPass::Forward);
  CHECK(f.x.dims == std::array<int64_t, 4>{2, 8, 10, 10});
  CHECK(f.x.strides == std::array<int64_t, 4>{800, 100, 10, 1});
  CHECK(f.w.dims == std::array<int64_t, 4>{16, 4, 3, 3});  // C/groups: cuDNN infers the 2 groups
  CHECK(f.w.strides == std::array<int64_t, 4>{36, 9, 3, 1});
  CHECK(f.y.dims == std::array<int64_t, 4>{2, 16, 5, 5});
  CHECK(f.x.uid == 'x');
  CHECK(f.w.uid == 'w');
  CHECK(f.y.uid == 'y');
  CHECK(f.x.dtype == DType::F32);
  CHECK(f.compute == DType::F32);
  CHECK(f.pre_pad == std::array<int64_t, 2>{1, 1});
  CHECK(f.post_pad == f.pre_pad);
  CHECK(f.stride == std::array<int64_t, 2>{2, 2});
  CHECK(f.dilation == std::array<int64_t, 2>{1, 1});
  CHECK(f.x.alignment == 32);
  CHECK(f.allow_tensor_cores);  // PyTorch's default allow_tf32 for cuDNN
  CHECK(f.alpha == 1.f);
  CHECK(f.beta == 0.f);
}

TEST_CASE("conv graph spec: the backward passes keep the forward's tensors and bind their gradients by role") {
  const Graph g = spec_net({});
  const OpTranslation d = translate_op(g, spec_op(g, "conv.bwd_data"));
  const OpTranslation w = translate_op(g, spec_op(g, "conv.bwd_filter"));
  const ConvGraphSpec sd = conv_graph_spec(d, 0), sw = conv_graph_spec(w, 0);
  CHECK(sd.pass == ConvPass::BackwardData);
  CHECK(sw.pass == ConvPass::BackwardFilter);
  const ConvGraphSpec f = conv_graph_spec(translate_op(g, spec_op(g, "conv")), 0);
  for (const ConvGraphSpec* s : {&sd, &sw}) {
    CHECK(s->x.dims == f.x.dims);
    CHECK(s->w.dims == f.w.dims);
    CHECK(s->y.dims == f.y.dims);
  }
  // Which operand of the step is x, w, y: backward-data writes dx (x) from dy (y) and w; backward-filter writes
  // dw (w) from x and dy. The bytes of each operand are the role's tensor's.
  auto bytes = [](const OpTranslation& t, ConvOperand o) {
    return (o.out ? t.steps[0].args.out : t.steps[0].args.in).at(o.slot).bytes;
  };
  const auto od = conv_operands(ConvPass::BackwardData), ow = conv_operands(ConvPass::BackwardFilter);
  CHECK(od[0].out);
  CHECK(bytes(d, od[0]) == 2 * 8 * 10 * 10 * 4);
  CHECK(bytes(d, od[1]) == 16 * 4 * 3 * 3 * 4);
  CHECK(bytes(d, od[2]) == 2 * 16 * 5 * 5 * 4);
  CHECK(ow[1].out);
  CHECK(bytes(w, ow[0]) == 2 * 8 * 10 * 10 * 4);
  CHECK(bytes(w, ow[1]) == 16 * 4 * 3 * 3 * 4);
  CHECK(bytes(w, ow[2]) == 2 * 16 * 5 * 5 * 4);
  // Their keys differ from the forward's (one plan per pass) and from each other.
  CHECK(sd.key() != f.key());
  CHECK(sd.key() != sw.key());
  CHECK(f.key().rfind("fwd x:", 0) == 0);
}

TEST_CASE("conv graph spec: channels_last 16-bit convolutions have NHWC strides on every tensor, fp32 compute") {
  TrainingOptions t;
  t.memory_format = MemoryFormat::NHWC;
  for (Precision p : {Precision::MixedFP16, Precision::MixedBF16}) {
    t.precision = p;
    const Graph g = spec_net(t);
    const OpTranslation tr = translate_op(g, spec_op(g, "conv.bwd_filter"));
    CHECK(tr.conv.channels_last);
    const ConvGraphSpec s = conv_graph_spec(tr, 0);
    const DType want = p == Precision::MixedFP16 ? DType::F16 : DType::BF16;
    CHECK(s.x.dtype == want);
    CHECK(s.w.dtype == want);
    CHECK(s.y.dtype == want);
    CHECK(s.compute == DType::F32);
    CHECK(s.x.strides == std::array<int64_t, 4>{800, 1, 80, 8});  // C innermost, then W, H
    CHECK(s.w.strides == std::array<int64_t, 4>{36, 1, 12, 4});   // KRSC filters (channels_last weights)
    CHECK(s.y.strides == std::array<int64_t, 4>{400, 1, 80, 16});
    CHECK(s.allow_tensor_cores);
  }
}

TEST_CASE("conv graph spec: fp32 with TF32 off keeps tensor-core engines out, and dense strides of size-one dims") {
  TrainingOptions t;
  t.tf32 = Tf32::Off;
  const Graph g = spec_net(t);
  const OpTranslation tr = translate_op(g, spec_op(g, "conv"));
  CHECK_FALSE(tr.conv.tf32);
  CHECK_FALSE(conv_graph_spec(tr, 0).allow_tensor_cores);
  CHECK(tr.describe().find("no-tf32") != std::string::npos);
  // PyTorch's strides for size-one dims follow the same formula (its fixSizeOneDimStride).
  CHECK(dense_strides({4, 1, 1, 1}, true) == std::array<int64_t, 4>{1, 1, 1, 1});
  CHECK(dense_strides({4, 3, 1, 1}, false) == std::array<int64_t, 4>{3, 1, 1, 1});
  CHECK(dense_strides({4, 3, 1, 2}, true) == std::array<int64_t, 4>{6, 1, 6, 3});
}

TEST_CASE("conv graph spec: refuses a step that is no convolution") {
  const Graph g = spec_net({});
  CHECK_THROWS_AS(conv_graph_spec(translate_op(g, spec_op(g, "fc")), 0), std::invalid_argument);
  // The forward of a biased convolution adds its bias in a second step, which is not the graph's.
  TrainingOptions t;
  ModelBuilder b("bias", 2, build_options(t));
  TensorId x = b.conv2d(b.input({2, 3, 6, 6}, DType::F32), 4, 3, 1, 1, 1, true, "c");
  b.cross_entropy_loss(b.linear(b.flatten(x), 10, true, "fc"));
  const Graph gb = make_training_graph(b.finish(), t);
  const OpTranslation c = translate_op(gb, spec_op(gb, "c"));
  REQUIRE(c.steps.size() == 2);
  CHECK_NOTHROW(conv_graph_spec(c, 0));
  CHECK_THROWS_WITH(conv_graph_spec(c, 1), Catch::Contains("not a convolution"));
  CHECK_THROWS_AS(conv_graph_spec(c, 2), std::invalid_argument);
}
