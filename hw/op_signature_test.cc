#include "hw/op_signature.h"

#include <catch2/catch.hpp>

#include "hw/testing/fixtures.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
OpId conv(Graph& g, const std::string& prefix, int64_t stride) {
  TensorId x = add_tensor(g, prefix + ".x", DType::F32, {32, 3, 224, 224});
  TensorId w = add_tensor(g, prefix + ".w", DType::F32, {64, 3, 7, 7});
  TensorId y = add_tensor(g, prefix + ".y", DType::F32, {32, 64, 112, 112});
  Op o;
  o.name = prefix;
  o.kind = OpKind::Conv2d;
  o.inputs = {x, w, kNoTensor};
  o.outputs = {y};
  o.flops = 1;
  // Inserted out of name order on purpose: the signature must not depend on insertion order.
  o.set_attr(Attr::stride_h, stride);
  o.set_attr(Attr::pad_h, 3);
  o.set_attr(Attr::kernel_h, 7);
  return g.add_op(std::move(o));
}
}  // namespace

TEST_CASE("an op signature spells kind, shapes, dtypes and attributes in a fixed form") {
  Graph g;
  OpId c = conv(g, "conv1", 2);
  CHECK(op_signature(g, g.op(c)) ==
        "Conv2d in=f32[32,3,224,224];f32[64,3,7,7];- out=f32[32,64,112,112] attrs=kernel_h=7,pad_h=3,stride_h=2");
}

TEST_CASE("signatures ignore names, ids and phase but not attributes or types") {
  Graph g;
  OpId a = conv(g, "layer1.conv", 2);
  OpId b = conv(g, "layer2.conv", 2);
  OpId c = conv(g, "layer3.conv", 1);
  g.op(b).phase = Phase::Backward;
  CHECK(op_signature(g, g.op(a)) == op_signature(g, g.op(b)));
  CHECK(op_signature(g, g.op(a)) != op_signature(g, g.op(c)));
  std::string before = op_signature(g, g.op(a));
  g.tensor(g.op(a).inputs[0]).dtype = DType::BF16;
  CHECK(op_signature(g, g.op(a)) != before);
  CHECK(op_signature(g, g.op(a)).starts_with("Conv2d in=bf16[32,3,224,224]"));
}

TEST_CASE("an op without tensors or attributes still has a signature") {
  Graph g;
  OpId o = add_op(g, OpKind::ZeroGrad, {}, {}, 0, 0, 0);
  CHECK(op_signature(g, g.op(o)) == std::string(to_string(OpKind::ZeroGrad)) + " in= out= attrs=");
}
