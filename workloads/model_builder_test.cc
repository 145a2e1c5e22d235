#include "workloads/model_builder.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

TEST_CASE("conv2d follows PyTorch's output size, weight shape and MAC count") {
  ModelBuilder b("m", 2);
  TensorId x = b.input({2, 3, 224, 224}, DType::F32);
  TensorId y = b.conv2d(x, 64, 7, 2, 3, 1, false, "conv1");
  const Graph& g = b.graph();
  CHECK(g.tensor(y).shape == std::vector<int64_t>{2, 64, 112, 112});
  CHECK(g.tensor(y).bytes == 2ull * 64 * 112 * 112 * 4);
  const Op& op = g.ops().back();
  CHECK(op.kind == OpKind::Conv2d);
  CHECK(op.attr(Attr::macs) == 2ll * 64 * 112 * 112 * 3 * 7 * 7);
  CHECK(op.flops == 2.0 * static_cast<double>(op.attr(Attr::macs)));
  REQUIRE(op.inputs.size() == 2);
  CHECK(g.tensor(op.inputs[1]).shape == std::vector<int64_t>{64, 3, 7, 7});
  CHECK(g.tensor(op.inputs[1]).kind == TensorKind::Weight);
  CHECK(g.tensor(op.inputs[1]).persistent);
  CHECK(op.bytes_read == g.tensor(x).bytes + g.tensor(op.inputs[1]).bytes);
}

TEST_CASE("pooling output sizes include ceil_mode's last-window rule") {
  ModelBuilder b("m", 1);
  TensorId x = b.input({1, 64, 112, 112}, DType::F32);
  CHECK(b.graph().tensor(b.max_pool(x, 3, 2, 0, true)).shape[2] == 56);   // GoogLeNet's maxpool1
  CHECK(b.graph().tensor(b.max_pool(x, 3, 2, 1, false)).shape[2] == 56);  // ResNet's stem
  TensorId z = b.input({1, 8, 13, 13}, DType::F32);
  CHECK(b.graph().tensor(b.max_pool(z, 3, 2, 0, true)).shape[2] == 6);
  CHECK(b.graph().tensor(b.max_pool(z, 2, 2, 0, true)).shape[2] == 7);
  TensorId p = b.max_pool(x, 2, 2, 0);
  const Op& mp = b.graph().ops().back();
  REQUIRE(mp.outputs.size() == 2);
  CHECK(b.graph().tensor(mp.outputs[1]).dtype == DType::I64);
  CHECK(mp.outputs[0] == p);
}

TEST_CASE("in-place relu and add write their input tensor") {
  ModelBuilder b("m", 1);
  TensorId x = b.input({1, 4, 8, 8}, DType::F32);
  TensorId c = b.conv2d(x, 4, 3, 1, 1);
  CHECK(b.relu(c) == c);
  CHECK(b.relu(c, false) != c);
  TensorId c2 = b.conv2d(x, 4, 3, 1, 1);
  CHECK(b.add(c2, c, true) == c2);
  CHECK(b.add(c2, c, false) != c2);
}

TEST_CASE("reshape, transpose, matmul and concat shapes") {
  ModelBuilder b("m", 2);
  TensorId x = b.input({2, 5, 12}, DType::F32);
  TensorId r = b.reshape(x, {2, 5, 3, -1});
  CHECK(b.graph().tensor(r).shape == std::vector<int64_t>{2, 5, 3, 4});
  TensorId t = b.transpose(r, {0, 2, 1, 3});
  CHECK(b.graph().tensor(t).shape == std::vector<int64_t>{2, 3, 5, 4});
  TensorId kt = b.transpose(r, {0, 2, 3, 1});
  TensorId s = b.matmul(t, kt);
  CHECK(b.graph().tensor(s).shape == std::vector<int64_t>{2, 3, 5, 5});
  CHECK(b.graph().ops().back().attr(Attr::macs) == 6 * 5 * 4 * 5);
  TensorId c = b.concat({x, x}, -1);
  CHECK(b.graph().tensor(c).shape == std::vector<int64_t>{2, 5, 24});
  TensorId p = b.pad(x, {0, 1, 0, 0, 2, 3});
  CHECK(b.graph().tensor(p).shape == std::vector<int64_t>{2, 8, 15});
  TensorId e = b.embedding(b.input({2, 5}, DType::I64, "ids"), 100, 12);
  CHECK(b.graph().tensor(e).shape == std::vector<int64_t>{2, 5, 12});
  TensorId l = b.linear(b.layer_norm(b.gelu(e)), 7);
  CHECK(b.graph().tensor(l).shape == std::vector<int64_t>{2, 5, 7});
  CHECK(b.graph().ops().back().attr(Attr::macs) == 10 * 12 * 7);
}

TEST_CASE("bad layers throw ConfigError naming the model and the layer") {
  ModelBuilder b("mynet", 1);
  TensorId x = b.input({1, 3, 8, 8}, DType::F32);
  try {
    b.conv2d(x, 8, 3, 1, 1, 2, false, "features.0");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "mynet");
    CHECK(e.key() == "features.0");
    CHECK(std::string(e.what()).find("groups") != std::string::npos);
  }
  CHECK_THROWS_AS(b.conv2d(x, 8, 11, 1, 0), ConfigError);
  CHECK_THROWS_AS(b.reshape(x, {5, -1}), ConfigError);
  CHECK_THROWS_AS(b.matmul(x, b.parameter({5, 4}, "w")), ConfigError);
  CHECK_THROWS_AS(b.concat({}, 1), ConfigError);
  CHECK_THROWS_AS(b.dropout(x, 1.5), ConfigError);
  CHECK_THROWS_AS(ModelBuilder("m", 0), ConfigError);
}

TEST_CASE("a tensor beyond 2^50 bytes or a MAC count beyond int64 is an error, never a wrapped size") {
  ModelBuilder huge_batch("resnet", int64_t{1} << 40);
  CHECK_THROWS_WITH(huge_batch.input({int64_t{1} << 40, 3, 224, 224}, DType::F32), Catch::Contains("2^50 bytes"));
  ModelBuilder huge_image("resnet", 32);
  CHECK_THROWS_WITH(huge_image.input({32, 3, 4000000000, 4000000000}, DType::F32), Catch::Contains("2^50 bytes"));
  // Each tensor fits, the multiply-accumulates of the product do not.
  ModelBuilder wide("mlp", 1);
  TensorId x = wide.input({int64_t{1} << 24, int64_t{1} << 20}, DType::F32);  // 2^46 bytes
  CHECK_THROWS_WITH(wide.linear(x, int64_t{1} << 20, true, "fc"), Catch::Contains("multiply-accumulates"));
}

TEST_CASE("mixed precision casts like autocast: weights once, fp32 ops cast up") {
  ModelBuilder b("m", 2, DType::BF16);
  TensorId ids = b.input({2, 4}, DType::I64, "ids");
  TensorId e = b.embedding(ids, 50, 8, "wte");
  const Graph& g = b.graph();
  CHECK(g.tensor(e).dtype == DType::F32);
  TensorId wte = g.ops().back().inputs[1];
  TensorId h = b.linear(e, 8, true, "fc");
  CHECK(g.tensor(h).dtype == DType::BF16);
  TensorId logits1 = b.linear_with_weight(h, wte, false, "head1");
  TensorId logits2 = b.linear_with_weight(h, wte, false, "head2");
  CHECK(g.tensor(logits1).dtype == DType::BF16);
  (void)logits2;
  int weight_casts = 0;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::Copy && op.inputs[0] == wte) ++weight_casts;
  CHECK(weight_casts == 1);
  TensorId sm = b.softmax(logits1, -1);
  CHECK(g.tensor(sm).dtype == DType::F32);
  TensorId ln = b.layer_norm(h);
  CHECK(g.tensor(ln).dtype == DType::F32);
  for (const Tensor& t : g.tensors())
    if (t.kind == TensorKind::Weight) CHECK(t.dtype == DType::F32);
}
