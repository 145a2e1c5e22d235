// The mappings added for the zoo's remaining ops, checked on graphs from the real builders (ModelBuilder and
// the training synthesis): ceil_mode pooling, in-place ReLU6 with its saved clone, LRN, the transformer ops,
// pad/crop, and autocast's casts. Element maps are evaluated on the host, so the data movement a kernel will
// do is checked here, without a GPU.
#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "validate/gpu/op_translation.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

const Op& op_named(const Graph& g, const std::string& name) {
  for (const Op& o : g.ops())
    if (o.name == name) return o;
  FAIL("no op named " << name);
  throw 0;
}

// The host twin of the kernels' map_index (validate/gpu/cuda/kernels.cu): input element read by output i, or -1.
int64_t map_index(const NdMap& m, int64_t i) {
  if (m.empty()) return i;
  int64_t off = 0;
  for (size_t d = m.dims.size(); d-- > 0;) {
    const int64_t c = i % m.dims[d] - m.shift[d];
    i /= m.dims[d];
    if (c < 0 || c >= m.bound[d]) return -1;
    off += c * m.strides[d];
  }
  return off;
}

Graph train(ModelBuilder& b, Precision p = Precision::FP32) {
  TrainingOptions t;
  t.precision = p;
  return make_training_graph(b.finish(), t);
}

}  // namespace

TEST_CASE("plan ops: ceil_mode pooling runs on our kernel with PyTorch's window rule") {
  ModelBuilder b("pools", 2);
  TensorId x = b.input({2, 4, 10, 10}, DType::F32);
  x = b.conv2d(x, 4, 3, 1, 1, 1, false, "conv");
  TensorId m = b.max_pool(x, 3, 2, 0, true, "maxpool");    // floor: 4x4, ceil: 5x5
  TensorId a = b.avg_pool(m, 2, 2, 0, true, false, "avg");  // 5 -> ceil 3 (floor 2), excluding padding
  TensorId f = b.max_pool(a, 2, 1, 0, false, "floor");      // an ordinary one stays on cuDNN
  b.cross_entropy_loss(b.linear(b.flatten(f), 10, true, "fc"));
  const Graph g = train(b);

  OpTranslation mp = translate_op(g, op_named(g, "maxpool"));
  CHECK(mp.lib == KernelLib::Ours);
  CHECK(mp.pool.ceil_mode);
  CHECK(mp.pool.p == 5);
  REQUIRE(mp.steps.size() == 1);
  CHECK(mp.steps[0].call == KernelCall::Pool2dForward);
  REQUIRE(mp.steps[0].args.out.size() == 2);  // y and the int64 indices the backward reads
  CHECK(mp.steps[0].args.out[1].id == op_named(g, "maxpool").outputs[1]);
  CHECK(mp.steps[0].args.out[1].dtype == DType::I64);

  OpTranslation mb = translate_op(g, op_named(g, "maxpool.bwd"));
  REQUIRE(mb.steps.size() == 1);
  CHECK(mb.steps[0].call == KernelCall::Pool2dBackward);
  CHECK(mb.steps[0].args.in[1].id == op_named(g, "maxpool").outputs[1]);
  CHECK(mb.steps[0].args.out[0].id == op_named(g, "maxpool.bwd").outputs[0]);
  CHECK(mb.steps[0].elements == 2 * 4 * 10 * 10);

  OpTranslation av = translate_op(g, op_named(g, "avg"));
  CHECK(av.pool.ceil_mode);
  CHECK_FALSE(av.pool.max);
  CHECK_FALSE(av.pool.include_pad);
  CHECK(av.pool.p == 3);
  CHECK(av.describe().find("ceil_mode") != std::string::npos);

  OpTranslation fl = translate_op(g, op_named(g, "floor"));
  CHECK(fl.lib == KernelLib::Cudnn);
  CHECK(fl.steps[0].call == KernelCall::PoolingForward);
  CHECK(fl.x_dims == std::vector<int64_t>{2, 4, 3, 3});
  CHECK(fl.y_dims == std::vector<int64_t>{2, 4, 2, 2});
}

TEST_CASE("plan ops: in-place ReLU6 reads autograd's clone, the clone is a copy") {
  ModelBuilder b("relu6", 2);
  TensorId x = b.conv2d(b.input({2, 3, 8, 8}, DType::F32), 8, 3, 1, 1, 1, false, "conv");
  x = b.relu6(x, true, "act");
  b.cross_entropy_loss(b.linear(b.flatten(b.adaptive_avg_pool(x, 1, 1, "gap")), 10, true, "fc"));
  const Graph g = train(b);
  const Op& fwd = op_named(g, "act");
  const TensorId clone = fwd.inputs.at(1);

  OpTranslation c = translate_op(g, op_named(g, "act.clone"));
  REQUIRE(c.steps.size() == 1);
  CHECK(c.steps[0].call == KernelCall::Copy);
  CHECK(c.steps[0].args.out[0].id == clone);
  CHECK(c.steps[0].cols == 2 * 8 * 8 * 8 * 4);

  OpTranslation f = translate_op(g, fwd);
  CHECK(f.steps[0].call == KernelCall::ActivationForward);
  CHECK(f.steps[0].fn == Pointwise::Relu6);
  CHECK(f.steps[0].args.in[0].id == f.steps[0].args.out[0].id);  // in place

  OpTranslation bw = translate_op(g, op_named(g, "act.bwd"));
  REQUIRE(bw.steps.size() == 1);
  CHECK(bw.steps[0].call == KernelCall::ActivationBackward);
  CHECK(bw.steps[0].args.in[0].id == clone);  // the saved input, not the overwritten output
  CHECK(bw.x_dims == std::vector<int64_t>{2, 8, 8, 8});
}

TEST_CASE("plan ops: LRN (an Other op) maps to cuDNN's cross-channel LRN") {
  ModelOptions o;
  o.batch = 2;
  const Graph g = build_training_graph("cifar-alexnet", o);
  OpTranslation f = translate_op(g, op_named(g, "lrn1"));
  CHECK(f.lib == KernelLib::Cudnn);
  CHECK(f.lrn_size == 3);
  CHECK(f.steps[0].call == KernelCall::LrnForward);
  CHECK(f.x_dims == std::vector<int64_t>{2, 32, 16, 16});
  const Op& bop = op_named(g, "lrn2.bwd");
  OpTranslation b = translate_op(g, bop);
  CHECK(b.steps[0].call == KernelCall::LrnBackward);
  CHECK(b.steps[0].args.in[0].id == g.op(bop.forward_op).outputs[0]);  // y, dy, x
  CHECK(b.steps[0].args.in[2].id == g.op(bop.forward_op).inputs[0]);
}

TEST_CASE("plan ops: BERT's attention, embeddings, layer norm, pooler and loss") {
  ModelOptions o;
  o.batch = 2;
  o.seq_len = 16;
  const Graph g = build_training_graph("bert-base", o);
  const std::string p = "encoder.layer.0.attention.self.";

  // Head split: the [2, 16, 768] linear output read as its [2, 16, 12, 64] view, permuted to [2, 12, 16, 64].
  OpTranslation q = translate_op(g, op_named(g, p + "query.permute"));
  REQUIRE(q.steps.size() == 1);
  CHECK(q.steps[0].call == KernelCall::Gather);
  CHECK(q.steps[0].map_a.dims == std::vector<int64_t>{2, 12, 16, 64});
  CHECK(q.steps[0].map_a.strides == std::vector<int64_t>{16 * 768, 64, 768, 1});
  // Output (b, h, s, d) reads input (b, s, h, d).
  CHECK(map_index(q.steps[0].map_a, ((1 * 12 + 3) * 16 + 5) * 64 + 7) == ((1 * 16 + 5) * 12 + 3) * 64 + 7);
  // Its backward undoes it: gradient (b, s, h, d) reads (b, h, s, d).
  OpTranslation qb = translate_op(g, op_named(g, p + "query.permute.bwd"));
  CHECK(qb.steps[0].map_a.dims == std::vector<int64_t>{2, 16, 12, 64});
  for (int64_t i : {int64_t{0}, int64_t{12345}, int64_t{2 * 16 * 768 - 1}})
    CHECK(map_index(q.steps[0].map_a, map_index(qb.steps[0].map_a, i)) == i);

  OpTranslation sc = translate_op(g, op_named(g, p + "scores"));
  REQUIRE(sc.steps.size() == 1);
  CHECK(sc.steps[0].call == KernelCall::GemmStridedBatched);
  CHECK(sc.steps[0].gemm.batch == 24);
  CHECK(sc.steps[0].gemm.m == 16);
  CHECK(sc.steps[0].gemm.n == 16);
  CHECK(sc.steps[0].gemm.k == 64);
  OpTranslation cb = translate_op(g, op_named(g, p + "context.bwd"));  // probs[24,16,16] * v[24,16,64]
  REQUIRE(cb.steps.size() == 2);
  CHECK(cb.steps[0].gemm.trans_b);  // dprobs = dy * v^T
  CHECK(cb.steps[0].gemm.n == 16);
  CHECK(cb.steps[1].gemm.trans_a);  // dv = probs^T * dy
  CHECK(cb.steps[1].gemm.m == 16);
  CHECK(cb.steps[1].gemm.n == 64);

  // Scale by a one-element constant, the [2, 1, 1, 16] mask broadcast over heads and queries.
  OpTranslation sm = translate_op(g, op_named(g, p + "scale"));
  CHECK(sm.steps[0].fn == Pointwise::Mul);
  CHECK(sm.steps[0].map_a.empty());
  CHECK(sm.steps[0].map_b.strides == std::vector<int64_t>{0, 0, 0, 0});
  OpTranslation mk = translate_op(g, op_named(g, p + "mask"));
  CHECK(mk.steps[0].map_b.strides == std::vector<int64_t>{16, 0, 0, 1});
  CHECK(map_index(mk.steps[0].map_b, ((1 * 12 + 4) * 16 + 9) * 16 + 3) == 16 + 3);
  OpTranslation sb = translate_op(g, op_named(g, p + "scale.bwd"));
  REQUIRE(sb.steps.size() == 1);  // the constant gets no gradient
  CHECK(sb.steps[0].fn == Pointwise::Mul);

  // Position embedding [1, 16, 768] added in place to [2, 16, 768]: its gradient is summed over the batch.
  OpTranslation rb = translate_op(g, op_named(g, "embeddings.add_position.bwd_reduce"));
  REQUIRE(rb.steps.size() == 1);
  CHECK(rb.steps[0].call == KernelCall::ReduceBroadcast);
  CHECK(rb.steps[0].map_a.bound == std::vector<int64_t>{1, 16, 768});
  CHECK(rb.steps[0].elements == 16 * 768);

  OpTranslation eb = translate_op(g, op_named(g, "embeddings.word_embeddings.bwd"));
  REQUIRE(eb.steps.size() == 2);
  CHECK(eb.steps[0].call == KernelCall::Fill);
  CHECK(eb.steps[1].call == KernelCall::EmbeddingBackward);
  CHECK(eb.steps[1].rows == 32);
  CHECK(eb.steps[1].cols == 768);

  const Op& lnf = op_named(g, "embeddings.LayerNorm");
  OpTranslation ln = translate_op(g, lnf);
  CHECK(ln.steps[0].call == KernelCall::LayerNormForward);
  CHECK(ln.steps[0].args.out[1].id == lnf.outputs[1]);  // mean and rstd are written for the backward
  OpTranslation lb = translate_op(g, op_named(g, "embeddings.LayerNorm.bwd"));
  REQUIRE(lb.steps.size() == 2);
  CHECK(lb.steps[0].call == KernelCall::LayerNormBackward);
  CHECK(lb.steps[0].args.in[3].id == lnf.outputs[1]);
  CHECK(lb.steps[1].call == KernelCall::LayerNormParamGrad);
  CHECK(lb.steps[1].args.out.size() == 2);

  OpTranslation sel = translate_op(g, op_named(g, "pooler.first_token"));
  REQUIRE(sel.steps.size() == 1);
  CHECK(sel.steps[0].call == KernelCall::Copy);
  CHECK(sel.steps[0].rows == 2);
  CHECK(sel.steps[0].cols == 768 * 4);
  CHECK(sel.steps[0].src_pitch == 16 * 768 * 4);
  CHECK(translate_op(g, op_named(g, "pooler.activation")).steps[0].fn == Pointwise::Tanh);

  const Op& loss = op_named(g, "loss");
  OpTranslation ce = translate_op(g, loss);
  CHECK(ce.steps[0].rows == 32);
  CHECK(ce.steps[0].cols == 30522);
  OpTranslation ceb = translate_op(g, op_named(g, "loss.bwd"));
  CHECK(ceb.steps[0].args.in[0].id == loss.outputs[1]);  // the log-probabilities autograd keeps
}

TEST_CASE("plan ops: a negative pad is a crop, its backward puts the gradient back in place") {
  ModelBuilder b("crop", 2);
  TensorId x = b.linear(b.input({2, 5, 8}, DType::F32), 8, true, "proj");
  x = b.pad(x, {0, -1, 0, 0, 0, 0}, "shift");  // drop the first position: [2, 4, 8]
  b.cross_entropy_loss(b.linear(x, 10, true, "head"));
  const Graph g = train(b);
  OpTranslation f = translate_op(g, op_named(g, "shift"));
  REQUIRE(f.steps.size() == 1);
  CHECK(f.steps[0].call == KernelCall::Gather);
  CHECK(f.steps[0].elements == 2 * 4 * 8);
  CHECK(map_index(f.steps[0].map_a, 0) == 8);                // y[0, 0, 0] = x[0, 1, 0]
  CHECK(map_index(f.steps[0].map_a, 4 * 8 + 3) == 40 + 8 + 3);  // y[1, 0, 3] = x[1, 1, 3]
  OpTranslation bw = translate_op(g, op_named(g, "shift.bwd"));
  CHECK(bw.steps[0].elements == 2 * 5 * 8);
  CHECK(map_index(bw.steps[0].map_a, 3) == -1);      // dx[0, 0, 3]: cropped away, zero
  CHECK(map_index(bw.steps[0].map_a, 8 + 3) == 3);   // dx[0, 1, 3] = dy[0, 0, 3]
  for (int64_t i = 0; i < 2 * 4 * 8; ++i) CHECK(map_index(bw.steps[0].map_a, map_index(f.steps[0].map_a, i)) == i);
}

TEST_CASE("plan ops: mixed precision casts and per-operand types") {
  ModelOptions o;
  o.batch = 2;
  o.training.precision = Precision::MixedBF16;
  o.training.memory_format = MemoryFormat::NHWC;  // NCHW's layout transposes are the simulator's (below)
  const Graph g = build_training_graph("resnet18", o);
  const Op& conv = op_named(g, "conv1");
  OpTranslation c = translate_op(g, conv);
  CHECK(c.dtype == DType::BF16);
  CHECK(c.conv.k == 64);
  // The fp32 image and master weight are cast to bf16 first, as autocast does.
  const Op& cast = op_named(g, "conv1.cast");
  OpTranslation k = translate_op(g, cast);
  REQUIRE(k.steps.size() == 1);
  CHECK(k.steps[0].call == KernelCall::ElementwiseUnary);
  CHECK(k.steps[0].fn == Pointwise::Cast);
  CHECK(k.steps[0].args.in[0].dtype == DType::F32);
  CHECK(k.steps[0].args.out[0].dtype == DType::BF16);
  // Batch norm keeps fp32 statistics beside bf16 activations; the optimizer updates fp32 masters.
  OpTranslation bn = translate_op(g, op_named(g, "bn1"));
  CHECK(bn.dtype == DType::BF16);
  CHECK(bn.steps[0].args.in[1].dtype == DType::F32);
  for (const Op& op : g.ops())
    if (op.kind == OpKind::SgdMomentumUpdate) CHECK(translate_op(g, op).steps[0].args.in[0].dtype == DType::F32);
}

TEST_CASE("plan ops: an Other op of unknown kind and an inconsistent transpose are errors") {
  Graph g;
  g.name = "bad";
  Tensor t;
  t.name = "x", t.shape = {2, 3}, t.bytes = 24;
  const TensorId x = g.add_tensor(t);
  t.name = "y";
  const TensorId y = g.add_tensor(t);
  Op o;
  o.name = "mystery";
  o.kind = OpKind::Other;
  o.inputs = {x}, o.outputs = {y};
  g.add_op(o);
  CHECK_THROWS_WITH(translate_op(g, g.op(0)), Catch::Contains("sub-kind the harness has no kernel for"));
  o.name = "tr";
  o.kind = OpKind::Transpose;
  o.set_attr_list(Attr::perm, {1, 0});
  g.add_op(o);  // [2, 3] -> [2, 3] is not a transposition
  CHECK_THROWS_WITH(translate_op(g, g.op(1)), Catch::Contains("not the permuted input shape"));
}

TEST_CASE("plan ops: what only the simulator models is refused by name") {
  ModelOptions o;
  o.batch = 2;
  o.training.precision = Precision::MixedBF16;  // NCHW: layout transposes around the convolutions
  const Graph g = build_training_graph("resnet18", o);
  bool transpose_seen = false;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::Transpose && op.has_attr(Attr::layout_transpose)) {
      transpose_seen = true;
      try {
        translate_op(g, op);
        FAIL("a layout transpose was planned");
      } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("layout transpose") != std::string::npos);
      }
      break;
    }
  CHECK(transpose_seen);
  o.training = TrainingOptions{};
  o.training.kernels = Kernels::Fused;
  const Graph f = build_training_graph("resnet18", o);
  size_t refused = 0;
  for (const Op& op : f.ops())
    if ((op.kind == OpKind::BatchNorm && op.has_attr(Attr::fused_relu)) ||
        (op.declares(Attr::multi_tensor) && op.has_attr(Attr::multi_tensor))) {
      CHECK_THROWS_AS(translate_op(f, op), ConfigError);
      ++refused;
    }
  CHECK(refused > 0);
}
