#include "workloads/memory_format.h"

#include <catch2/catch.hpp>

#include "workloads/zoo.h"

using namespace dlsim;

namespace {

Graph resnet18(Precision p, MemoryFormat f) {
  ModelOptions o;
  o.batch = 4;
  o.training.precision = p;
  o.training.memory_format = f;
  return build_training_graph("resnet18", o);
}

bool is_conv(OpKind k) { return k == OpKind::Conv2d || k == OpKind::Conv2dBwdData || k == OpKind::Conv2dBwdFilter; }

size_t count(const Graph& g, bool (*pred)(const Op&)) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += pred(op);
  return n;
}

}  // namespace

TEST_CASE("16-bit NCHW convolutions run between layout transposes, channels_last ones do not") {
  const Graph nchw = resnet18(Precision::MixedFP16, MemoryFormat::NCHW);
  const Graph nhwc = resnet18(Precision::MixedFP16, MemoryFormat::NHWC);
  auto transposes = [](const Op& op) { return op.kind == OpKind::Transpose && op.has_attr(Attr::layout_transpose); };
  auto convs = [](const Op& op) { return is_conv(op.kind); };
  CHECK(count(nhwc, transposes) == 0);
  REQUIRE(count(nchw, convs) == count(nhwc, convs));
  // Every convolution: its activation inputs in (x; dy; dy and x) and its activation output back (y; dx).
  size_t expected = 0;
  for (const Op& op : nchw.ops()) {
    if (op.kind == OpKind::Conv2d || op.kind == OpKind::Conv2dBwdData) expected += 2;
    if (op.kind == OpKind::Conv2dBwdFilter) expected += 2;
  }
  CHECK(count(nchw, transposes) == expected);
  CHECK(nchw.ops().size() == nhwc.ops().size() + expected);
  for (size_t i = 0; i < nchw.ops().size(); ++i) {
    const Op& op = nchw.ops()[i];
    if (op.kind != OpKind::Conv2d) continue;
    // x -> x.nhwc right before the convolution, y.nhwc -> y right after; the convolution sees NHWC shapes.
    REQUIRE(i > 0);
    const Op& in = nchw.ops()[i - 1];
    const Op& out = nchw.ops()[i + 1];
    CHECK(transposes(in));
    CHECK(transposes(out));
    CHECK(in.outputs[0] == op.inputs[0]);
    CHECK(out.inputs[0] == op.outputs[0]);
    const auto& x = nchw.tensor(in.inputs[0]).shape;
    CHECK(nchw.tensor(op.inputs[0]).shape == std::vector<int64_t>{x[0], x[2], x[3], x[1]});
    CHECK(in.bytes_read == nchw.tensor(in.inputs[0]).bytes);
  }
  // Channels-last convolutions are marked, so that measured tables keep the layouts apart.
  for (const Op& op : nhwc.ops())
    if (is_conv(op.kind)) CHECK(op.attr(Attr::channels_last) == 1);
  // The same arithmetic either way.
  double f1 = 0, f2 = 0;
  for (const Op& op : nchw.ops()) f1 += op.flops;
  for (const Op& op : nhwc.ops()) f2 += op.flops;
  CHECK(f1 == f2);
}

TEST_CASE("fp32 NCHW convolutions need no transposes (cuDNN has NCHW kernels for them)") {
  const Graph g = resnet18(Precision::FP32, MemoryFormat::NCHW);
  for (const Op& op : g.ops()) {
    CHECK_FALSE((op.declares(Attr::layout_transpose) && op.has_attr(Attr::layout_transpose)));
    CHECK_FALSE((op.declares(Attr::channels_last) && op.has_attr(Attr::channels_last)));
  }
  // ... and a backward transpose belongs to its convolution's forward op.
  const Graph h = resnet18(Precision::MixedBF16, MemoryFormat::NCHW);
  for (const Op& op : h.ops())
    if (op.kind == OpKind::Transpose && op.has_attr(Attr::layout_transpose) && op.phase == Phase::Backward) {
      REQUIRE(op.forward_op >= 0);
      CHECK(h.op(op.forward_op).kind == OpKind::Conv2d);
    }
}
