// Kernels::Fused (workloads/training.h): fewer kernels, the same arithmetic, the same parameters.
#include <catch2/catch.hpp>

#include "workloads/zoo.h"

using namespace dlsim;

namespace {

Graph build(const std::string& model, Kernels k, Optimizer opt, Precision p = Precision::FP32) {
  ModelOptions o;
  o.batch = 2;
  if (model.rfind("bert", 0) == 0) o.seq_len = 32;
  o.training.kernels = k;
  o.training.optimizer = opt;
  o.training.precision = p;
  return build_training_graph(model, o);
}

struct Totals {
  size_t kernels = 0;
  double flops = 0;
  uint64_t learnable = 0;
};

Totals totals(const Graph& g) {
  Totals t;
  for (const Op& op : g.ops()) {
    t.kernels += op.flops > 0 || op.bytes_read + op.bytes_written > 0;
    t.flops += op.flops;
  }
  for (const Tensor& x : g.tensors())
    if (x.learnable) t.learnable += static_cast<uint64_t>(numel(x.shape));
  return t;
}

// Forward (or optimizer) ops carrying the attribute; backward ops copy their forward's attributes.
size_t count_attr(const Graph& g, Attr attr) {
  size_t n = 0;
  for (const Op& op : g.ops()) n += op.phase != Phase::Backward && op.declares(attr) && op.has_attr(attr);
  return n;
}

}  // namespace

TEST_CASE("the fused BERT graph has fewer kernels and the same arithmetic") {
  for (Precision p : {Precision::FP32, Precision::MixedFP16}) {
    INFO(to_string(p));
    const Graph eager = build("bert-base-squad", Kernels::Eager, Optimizer::Adam, p);
    const Graph fused = build("bert-base-squad", Kernels::Fused, Optimizer::Adam, p);
    const Totals e = totals(eager), f = totals(fused);
    CHECK(f.kernels < e.kernels);
    CHECK(f.flops == Approx(e.flops).epsilon(1e-12));
    CHECK(f.learnable == e.learnable);
    // 12 layers: one fused softmax and one bias+GELU each, forward; one optimizer step for every parameter.
    CHECK(count_attr(fused, Attr::fused_mask_dropout) == 12);
    CHECK(count_attr(fused, Attr::fused_bias) == 12);
    CHECK(count_attr(fused, Attr::multi_tensor) == 1);
    size_t adam = 0;
    for (const Op& op : eager.ops()) adam += op.kind == OpKind::AdamUpdate;
    CHECK(adam > 100);
    // The fused Adam keeps no per-parameter denominator.
    for (const Op& op : fused.ops())
      if (op.kind == OpKind::AdamUpdate) CHECK(op.workspace == kNoTensor);
  }
}

TEST_CASE("the fused CNN graph folds each ReLU after a batch norm into it") {
  const Graph eager = build("resnet50", Kernels::Eager, Optimizer::SgdMomentum);
  const Graph fused = build("resnet50", Kernels::Fused, Optimizer::SgdMomentum);
  const Totals e = totals(eager), f = totals(fused);
  CHECK(f.flops == Approx(e.flops).epsilon(1e-12));
  CHECK(f.learnable == e.learnable);
  // ResNet-50: the stem and two ReLUs per bottleneck follow a batch norm (the third follows the residual add).
  CHECK(count_attr(fused, Attr::fused_relu) == 1 + 2 * 16);
  size_t relus_e = 0, relus_f = 0;
  for (const Op& op : eager.ops()) relus_e += op.kind == OpKind::Relu;
  for (const Op& op : fused.ops()) relus_f += op.kind == OpKind::Relu;
  CHECK(relus_f == relus_e - 33);
  // The backward of a fused batch norm reads its (ReLU'd) output for the mask, and no ReluBwd is left for it.
  for (const Op& op : fused.ops())
    if (op.kind == OpKind::BatchNormBwd && fused.op(op.forward_op).has_attr(Attr::fused_relu))
      CHECK(std::find(op.inputs.begin(), op.inputs.end(), fused.op(op.forward_op).outputs[0]) != op.inputs.end());
  CHECK(f.kernels == e.kernels - 2 * 33 - 161 + 1);  // ReLU and ReluBwd per fusion; 161 SGD steps become one
}
