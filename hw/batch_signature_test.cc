#include "hw/batch_signature.h"

#include <catch2/catch.hpp>

#include "hw/op_signature.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using testing::add_op;
using testing::add_tensor;

namespace {
// conv at batch n: x [n,64,8,8], w [64,64,3,3] (64 output channels: equal to the batch at n = 64), y likewise;
// the backward-data op reads dy (the gradient of y, an activation) and writes dx.
struct Conv {
  Graph g;
  OpId fwd, bwd;
  explicit Conv(int64_t n) {
    g.batch = n;
    const TensorId x = add_tensor(g, "x", DType::F32, {n, 64, 8, 8});
    const TensorId w = add_tensor(g, "w", DType::F32, {64, 64, 3, 3});
    g.tensor(w).kind = TensorKind::Weight;
    g.tensor(w).persistent = true;
    const TensorId y = add_tensor(g, "y", DType::F32, {n, 64, 8, 8});
    fwd = add_op(g, OpKind::Conv2d, {x, w}, {y}, 1, 1, 1);
    g.op(fwd).set_attr(Attr::macs, n * 64 * 64 * 64 * 9);  // counts the batch: left out of the key
    g.op(fwd).set_attr(Attr::out_channels, 64);            // does not, even where it equals the batch
    const TensorId dy = add_tensor(g, "grad.y", DType::F32, {n, 64, 8, 8});
    g.tensor(dy).kind = TensorKind::Gradient;
    g.tensor(dy).grad_of = y;
    const TensorId dw = add_tensor(g, "grad.w", DType::F32, {64, 64, 3, 3});
    g.tensor(dw).kind = TensorKind::Gradient;
    g.tensor(dw).grad_of = w;
    bwd = add_op(g, OpKind::Conv2dBwdFilter, {x, dy}, {dw}, 1, 1, 1);
  }
};
}  // namespace

TEST_CASE("batch-free signature: the same op at batch 32 and 64 has one key, weights keep their dims") {
  Conv a(32), b(64);
  REQUIRE(op_signature(a.g, a.g.op(a.fwd)) != op_signature(b.g, b.g.op(b.fwd)));
  const auto ka = batch_free_signature(a.g, a.g.op(a.fwd)), kb = batch_free_signature(b.g, b.g.op(b.fwd));
  REQUIRE(ka);
  REQUIRE(kb);
  CHECK(ka->key == kb->key);
  CHECK(ka->batch == 32);
  CHECK(kb->batch == 64);
  CHECK(ka->key == "Conv2d in=f32[B,64,8,8];f32[64,64,3,3] out=f32[B,64,8,8] attrs=out_channels=64");
  // dy carries the batch (gradient of an activation), dW does not (gradient of a weight), even at batch 64.
  const auto wa = batch_free_signature(a.g, a.g.op(a.bwd)), wb = batch_free_signature(b.g, b.g.op(b.bwd));
  REQUIRE(wa);
  CHECK(wa->key == wb->key);
  CHECK(wb->key == "Conv2dBwdFilter in=f32[B,64,8,8];f32[B,64,8,8] out=f32[64,64,3,3] attrs=");
}

TEST_CASE("batch-free signature: flattened tokens are whole batches, an op without the batch has no key") {
  Graph g;
  g.batch = 4;
  const TensorId x = add_tensor(g, "x", DType::F32, {512, 768});  // batch 4 x seq 128
  const TensorId y = add_tensor(g, "y", DType::F32, {512, 768});
  const OpId gelu = add_op(g, OpKind::Gelu, {x}, {y}, 1, 1, 1);
  CHECK(batch_free_signature(g, g.op(gelu))->key == "Gelu in=f32[B*128,768] out=f32[B*128,768] attrs=");
  const TensorId w = add_tensor(g, "w", DType::F32, {768});
  g.tensor(w).kind = TensorKind::Weight;
  g.tensor(w).persistent = true;
  const TensorId m = add_tensor(g, "m", DType::F32, {768});
  g.tensor(m).kind = TensorKind::OptimizerState;
  g.tensor(m).persistent = true;
  const OpId sgd = add_op(g, OpKind::SgdMomentumUpdate, {w, m}, {w}, 1, 1, 1);
  CHECK_FALSE(batch_free_signature(g, g.op(sgd)));
}
