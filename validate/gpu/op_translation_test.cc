#include "validate/gpu/op_translation.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {

// A hand-built training graph: conv(3x3, stride 2, pad 1) -> relu -> maxpool -> flatten -> linear -> loss, and the
// backward ops, with the roles a training-graph builder gives them.
struct Net {
  Graph g;
  TensorId t(const std::string& name, TensorKind kind, std::vector<int64_t> shape, DType d = DType::F32) {
    Tensor x;
    x.name = name;
    x.kind = kind;
    x.dtype = d;
    x.shape = shape;
    uint64_t n = 1;
    for (auto s : shape) n *= static_cast<uint64_t>(s);
    x.bytes = n * dtype_bytes(d);
    return g.add_tensor(x);
  }
  OpId op(const std::string& name, OpKind k, std::vector<TensorId> in, std::vector<TensorId> out, OpId fwd = -1,
          const std::vector<std::pair<Attr, int64_t>>& attrs = {}) {
    Op o;
    o.name = name;
    o.kind = k;
    o.inputs = in;
    o.outputs = out;
    o.forward_op = fwd;
    for (const auto& [a, v] : attrs) o.set_attr(a, v);
    return g.add_op(o);
  }
};

std::vector<std::pair<Attr, int64_t>> conv_attrs(int64_t stride, int64_t pad) {
  return {{Attr::stride_h, stride}, {Attr::stride_w, stride}, {Attr::pad_h, pad}, {Attr::pad_w, pad}};
}

}  // namespace

TEST_CASE("plan: convolution forward and backward map to cuDNN with descriptor shapes from the graph") {
  Net n;
  auto x = n.t("x", TensorKind::Input, {8, 3, 32, 32});
  auto w = n.t("w", TensorKind::Weight, {16, 3, 3, 3});
  auto y = n.t("y", TensorKind::Activation, {8, 16, 16, 16});
  auto dy = n.t("dy", TensorKind::Gradient, {8, 16, 16, 16});
  auto dx = n.t("dx", TensorKind::Gradient, {8, 3, 32, 32});
  auto dw = n.t("dw", TensorKind::Gradient, {16, 3, 3, 3});
  OpId c = n.op("conv", OpKind::Conv2d, {x, w}, {y}, -1, conv_attrs(2, 1));
  OpId bd = n.op("conv.bwd_data", OpKind::Conv2dBwdData, {w, dy}, {dx}, c);      // dy second on purpose
  OpId bf = n.op("conv.bwd_filter", OpKind::Conv2dBwdFilter, {dy, x}, {dw}, c);  // roles by identity, not position

  OpTranslation f = translate_op(n.g, n.g.op(c));
  CHECK(f.lib == KernelLib::Cudnn);
  CHECK(f.needs_workspace);
  CHECK(f.x_dims == std::vector<int64_t>{8, 3, 32, 32});
  CHECK(f.y_dims == std::vector<int64_t>{8, 16, 16, 16});
  CHECK(f.conv.k == 16);
  CHECK(f.conv.r == 3);
  CHECK(f.conv.stride_h == 2);
  CHECK(f.conv.pad_w == 1);
  CHECK(f.conv.groups == 1);
  REQUIRE(f.steps.size() == 1);
  CHECK(f.steps[0].call == KernelCall::ConvForward);
  CHECK(f.steps[0].args.in[0].id == x);
  CHECK(f.steps[0].args.in[1].id == w);
  CHECK(std::string(to_string(f.steps[0].call)) == "cudnnConvolutionForward");

  OpTranslation d = translate_op(n.g, n.g.op(bd));
  REQUIRE(d.steps.size() == 1);
  CHECK(d.steps[0].call == KernelCall::ConvBackwardData);
  CHECK(d.steps[0].args.in[0].id == dy);
  CHECK(d.steps[0].args.in[1].id == w);
  CHECK(d.steps[0].args.out[0].id == dx);

  OpTranslation wf = translate_op(n.g, n.g.op(bf));
  REQUIRE(wf.steps.size() == 1);
  CHECK(wf.steps[0].call == KernelCall::ConvBackwardFilter);
  CHECK(wf.steps[0].args.in[0].id == x);
  CHECK(wf.steps[0].args.in[1].id == dy);
  CHECK(wf.steps[0].args.out[0].id == dw);
  CHECK(wf.describe().find("cudnnConvolutionBackwardFilter") != std::string::npos);
}

TEST_CASE("plan: a same-shape 3x3 convolution tells x from dy by identity") {
  Net n;
  auto x = n.t("x", TensorKind::Activation, {2, 8, 8, 8});
  auto w = n.t("w", TensorKind::Weight, {8, 8, 3, 3});
  auto y = n.t("y", TensorKind::Activation, {2, 8, 8, 8});
  auto dy = n.t("dy", TensorKind::Gradient, {2, 8, 8, 8});
  auto dw = n.t("dw", TensorKind::Gradient, {8, 8, 3, 3});
  OpId c = n.op("conv", OpKind::Conv2d, {x, w}, {y}, -1, conv_attrs(1, 1));
  OpId bf = n.op("bf", OpKind::Conv2dBwdFilter, {x, dy}, {dw}, c);
  OpTranslation p = translate_op(n.g, n.g.op(bf));
  CHECK(p.steps[0].args.in[0].id == x);
  CHECK(p.steps[0].args.in[1].id == dy);
}

TEST_CASE("plan: bad attributes and shapes are errors naming the op") {
  Net n;
  auto x = n.t("x", TensorKind::Input, {8, 3, 32, 32});
  auto w = n.t("w", TensorKind::Weight, {16, 3, 3, 3});
  auto y = n.t("y", TensorKind::Activation, {8, 16, 16, 16});
  OpId no_stride = n.op("conv_a", OpKind::Conv2d, {x, w}, {y});
  OpId wrong = n.op("conv_b", OpKind::Conv2d, {x, w}, {y}, -1, conv_attrs(1, 1));  // would give 32x32
  try {
    translate_op(n.g, n.g.op(no_stride));
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "conv_a");
    CHECK(std::string(e.what()).find("stride_h") != std::string::npos);
  }
  CHECK_THROWS_AS(translate_op(n.g, n.g.op(wrong)), ConfigError);
  auto dx = n.t("dx", TensorKind::Gradient, {8, 3, 32, 32});
  OpId orphan = n.op("orphan_bwd", OpKind::Conv2dBwdData, {y, w}, {dx});  // no forward_op
  CHECK_THROWS_WITH(translate_op(n.g, n.g.op(orphan)), Catch::Contains("without its forward op"));
  auto xb = n.t("xb", TensorKind::Input, {8, 3, 32, 32}, DType::BF16);
  OpId mixed = n.op("conv_c", OpKind::Conv2d, {xb, w}, {y}, -1, conv_attrs(2, 1));
  CHECK_THROWS_WITH(translate_op(n.g, n.g.op(mixed)), Catch::Contains("mixed data types"));
}

TEST_CASE("plan: linear layers as cuBLAS GEMMs with the row-major shapes") {
  Net n;
  auto x = n.t("x", TensorKind::Activation, {32, 512});
  auto w = n.t("fc.w", TensorKind::Weight, {10, 512});
  auto b = n.t("fc.b", TensorKind::Weight, {10});
  auto y = n.t("y", TensorKind::Activation, {32, 10});
  auto dy = n.t("dy", TensorKind::Gradient, {32, 10});
  auto dx = n.t("dx", TensorKind::Gradient, {32, 512});
  auto dw = n.t("dw", TensorKind::Gradient, {10, 512});
  auto db = n.t("db", TensorKind::Gradient, {10});
  OpId f = n.op("fc", OpKind::Linear, {x, w, b}, {y});
  OpId bd = n.op("fc.bd", OpKind::LinearBwdData, {dy, w}, {dx}, f);
  OpId bw = n.op("fc.bw", OpKind::LinearBwdWeight, {dy, x}, {dw, db}, f);

  OpTranslation pf = translate_op(n.g, n.g.op(f));
  CHECK(pf.lib == KernelLib::Cublas);
  REQUIRE(pf.steps.size() == 2);
  CHECK(pf.steps[0].call == KernelCall::Gemm);
  CHECK(pf.steps[0].gemm.m == 32);
  CHECK(pf.steps[0].gemm.n == 10);
  CHECK(pf.steps[0].gemm.k == 512);
  CHECK(pf.steps[0].gemm.trans_b);
  CHECK(pf.steps[1].call == KernelCall::BiasAdd);
  CHECK(pf.steps[1].rows == 32);
  CHECK(pf.steps[1].cols == 10);

  OpTranslation pd = translate_op(n.g, n.g.op(bd));
  CHECK(pd.steps[0].gemm.m == 32);
  CHECK(pd.steps[0].gemm.n == 512);
  CHECK(pd.steps[0].gemm.k == 10);
  CHECK(pd.steps[0].args.out[0].id == dx);

  OpTranslation pw = translate_op(n.g, n.g.op(bw));
  REQUIRE(pw.steps.size() == 2);
  CHECK(pw.steps[0].gemm.m == 10);
  CHECK(pw.steps[0].gemm.n == 512);
  CHECK(pw.steps[0].gemm.k == 32);
  CHECK(pw.steps[0].gemm.trans_a);
  CHECK(pw.steps[1].call == KernelCall::BiasGrad);
  CHECK(pw.steps[1].args.out[0].id == db);
}

TEST_CASE("plan: batch norm, activations, pooling and softmax through cuDNN, the rest through our kernels") {
  Net n;
  auto x = n.t("x", TensorKind::Activation, {4, 16, 8, 8});
  auto g = n.t("bn.w", TensorKind::Weight, {16});
  auto be = n.t("bn.b", TensorKind::Weight, {16});
  auto y = n.t("y", TensorKind::Activation, {4, 16, 8, 8});
  auto r = n.t("r", TensorKind::Activation, {4, 16, 8, 8});
  auto p = n.t("p", TensorKind::Activation, {4, 16, 4, 4});
  auto dp = n.t("dp", TensorKind::Gradient, {4, 16, 4, 4});
  auto dr = n.t("dr", TensorKind::Gradient, {4, 16, 8, 8});
  auto gap = n.t("gap", TensorKind::Activation, {4, 16, 1, 1});
  auto s = n.t("s", TensorKind::Activation, {4, 16, 1, 1});
  auto sum = n.t("sum", TensorKind::Activation, {4, 16, 8, 8});
  const std::vector<std::pair<Attr, int64_t>> pa = {{Attr::kernel, 2}, {Attr::stride, 2}, {Attr::pad, 0}};
  const std::vector<std::pair<Attr, int64_t>> sa = {{Attr::axis, 1}};
  OpId bn = n.op("bn", OpKind::BatchNorm, {x, g, be}, {y});
  OpId relu6 = n.op("relu6", OpKind::Relu6, {y}, {r});
  OpId mp = n.op("mp", OpKind::MaxPool, {r}, {p}, -1, pa);
  OpId mpb = n.op("mp.bwd", OpKind::MaxPoolBwd, {dp, r}, {dr}, mp);
  OpId gp = n.op("gap", OpKind::GlobalAvgPool, {r}, {gap});
  OpId sm = n.op("softmax", OpKind::Softmax, {gap}, {s}, -1, sa);
  OpId add = n.op("add", OpKind::Add, {x, r}, {sum});

  OpTranslation b = translate_op(n.g, n.g.op(bn));
  CHECK(b.steps[0].call == KernelCall::BatchNormForwardTraining);
  CHECK(b.steps[0].args.in[1].id == g);
  CHECK(b.steps[0].args.in[3].id == kNoTensor);  // running mean: a side buffer of C floats
  CHECK(b.steps[0].args.in[3].bytes == 16 * 4);
  OpTranslation a = translate_op(n.g, n.g.op(relu6));
  CHECK(a.steps[0].call == KernelCall::ActivationForward);
  CHECK(a.steps[0].fn == Pointwise::Relu6);
  OpTranslation m = translate_op(n.g, n.g.op(mp));
  CHECK(m.pool.max);
  CHECK(m.pool.win_h == 2);
  OpTranslation mb = translate_op(n.g, n.g.op(mpb));
  CHECK(mb.steps[0].call == KernelCall::PoolingBackward);
  CHECK(mb.steps[0].args.in[0].id == kNoTensor);  // y is not kept by the graph: side buffer of y's size
  CHECK(mb.steps[0].args.in[0].bytes == n.g.tensor(p).bytes);
  CHECK(mb.steps[0].args.in[1].id == dp);
  CHECK(mb.steps[0].args.in[2].id == r);
  OpTranslation gpp = translate_op(n.g, n.g.op(gp));
  CHECK_FALSE(gpp.pool.max);
  CHECK(gpp.pool.win_h == 8);
  OpTranslation smp = translate_op(n.g, n.g.op(sm));
  CHECK(smp.x_dims == std::vector<int64_t>{4, 16, 1, 1});
  OpTranslation ad = translate_op(n.g, n.g.op(add));
  CHECK(ad.lib == KernelLib::Ours);
  CHECK(ad.steps[0].call == KernelCall::ElementwiseBinary);
  CHECK(ad.steps[0].elements == 4 * 16 * 8 * 8);
}

TEST_CASE("plan: concat as strided copies, optimizer updates by tensor kind, index ranges for integer inputs") {
  Net n;
  auto a = n.t("a", TensorKind::Activation, {2, 3, 4, 4});
  auto b = n.t("b", TensorKind::Activation, {2, 5, 4, 4});
  auto c = n.t("c", TensorKind::Activation, {2, 8, 4, 4});
  const std::vector<std::pair<Attr, int64_t>> ax = {{Attr::axis, 1}};
  OpId cat = n.op("cat", OpKind::Concat, {a, b}, {c}, -1, ax);
  OpTranslation p = translate_op(n.g, n.g.op(cat));
  REQUIRE(p.steps.size() == 2);
  CHECK(p.steps[0].rows == 2);
  CHECK(p.steps[0].cols == 3 * 16 * 4);
  CHECK(p.steps[1].dst_offset == 3 * 16 * 4);
  CHECK(p.steps[1].dst_pitch == 8 * 16 * 4);

  auto w = n.t("w", TensorKind::Weight, {100});
  auto gw = n.t("w.grad", TensorKind::Gradient, {100});
  auto m1 = n.t("w.m", TensorKind::OptimizerState, {100});
  auto m2 = n.t("w.v", TensorKind::OptimizerState, {100});
  OpId adam = n.op("adam", OpKind::AdamUpdate, {gw, w, m1, m2}, {w, m1, m2});
  OpTranslation ap = translate_op(n.g, n.g.op(adam));
  CHECK(ap.steps[0].call == KernelCall::Adam);
  CHECK(ap.steps[0].args.in[0].id == w);
  CHECK(ap.steps[0].args.in[1].id == gw);
  CHECK(ap.steps[0].args.in[3].id == m2);
  CHECK(ap.steps[0].elements == 100);

  auto ids = n.t("ids", TensorKind::Input, {4, 7}, DType::I64);
  auto table = n.t("emb", TensorKind::Weight, {1000, 64});
  auto e = n.t("e", TensorKind::Activation, {4, 7, 64});
  auto logits = n.t("logits", TensorKind::Activation, {28, 1000});
  auto tgt = n.t("targets", TensorKind::Input, {28}, DType::I64);
  auto loss = n.t("loss", TensorKind::Activation, {1});
  n.op("emb", OpKind::Embedding, {ids, table}, {e});
  n.op("loss", OpKind::CrossEntropyLoss, {logits, tgt}, {loss});
  auto r = index_ranges(n.g);
  CHECK(r.at(ids) == 1000);
  CHECK(r.at(tgt) == 1000);
  CHECK(translate_graph(n.g).size() == n.g.ops().size());
}

TEST_CASE("plan: a collective is an error naming the op, not a crash (the harness runs one GPU)") {
  Net n;
  auto grad = n.t("grad", TensorKind::Gradient, {1024});
  for (OpKind k : {OpKind::AllReduce, OpKind::AllGather, OpKind::ReduceScatter, OpKind::Broadcast}) {
    INFO(to_string(k));
    OpId c = n.op(std::string("bucket_") + to_string(k), k, {grad}, {grad}, -1,
                  {{Attr::message_bytes, 4096}, {Attr::ranks, 8}});
    try {
      translate_op(n.g, n.g.op(c));
      FAIL("expected ConfigError");
    } catch (const ConfigError& e) {
      CHECK(e.key() == n.g.op(c).name);
      CHECK_THAT(e.what(), Catch::Contains("cannot run a collective"));
    }
  }
}

TEST_CASE("plan: a foreach Adam update is an error naming the op (the harness runs one fused kernel per update)") {
  Net n;
  auto w = n.t("w", TensorKind::Weight, {100});
  auto gw = n.t("w.grad", TensorKind::Gradient, {100});
  auto m1 = n.t("w.m", TensorKind::OptimizerState, {100});
  auto m2 = n.t("w.v", TensorKind::OptimizerState, {100});
  OpId adam = n.op("adam", OpKind::AdamUpdate, {w, gw, m1, m2}, {w, m1, m2}, -1, {{Attr::foreach, 1}});
  try {
    translate_op(n.g, n.g.op(adam));
    FAIL("expected ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "adam");
    CHECK_THAT(e.what(), Catch::Contains("foreach"));
  }
}
