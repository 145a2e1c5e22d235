// The translation plan's row-wise ops on our kernels: layer norm (forward, input gradient, parameter
// gradients), embedding lookup and its scatter-add backward, cross entropy from log-probabilities.
#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {
namespace {

void translate_layer_norm(const Graph& g, const Op& op, OpTranslation& kp) {
  // [x, gamma, beta] -> [y, mean, rstd]; backward [dy, x, gamma, beta, mean, rstd] -> [(dx), (dgamma), (dbeta)].
  const Op& f = op.kind == OpKind::LayerNorm ? op : forward_of(g, op);
  const TensorId x = need_in(g, f, 0), y = need_out(g, f, 0);
  KernelStep s;
  set_rows(s, g.tensor(x));
  const std::vector<int64_t> vshape{s.cols};
  auto vec = [&](const std::vector<TensorId>& ids, size_t i, int64_t n) {
    if (i < ids.size()) {
      const Tensor& t = g.tensor(ids[i]);
      if (numel(t) != n || t.dtype != DType::F32) fail(g, f, "'" + t.name + "' is not " + std::to_string(n) + " fp32 values");
      return arg(g, ids[i]);
    }
    return side(static_cast<uint64_t>(n) * 4);
  };
  if (g.tensor(x).dtype != DType::F32) fail(g, f, "layer norm runs in fp32 (autocast casts its input up)");
  if (op.kind == OpKind::LayerNorm) {
    s.call = KernelCall::LayerNormForward;
    s.args = {{arg(g, x), vec(f.inputs, 1, s.cols), vec(f.inputs, 2, s.cols)},
              {arg(g, y), vec(f.outputs, 1, s.rows), vec(f.outputs, 2, s.rows)}};
    kp.steps.push_back(s);
    return;
  }
  const TensorId dy = output_grad(g, op, f);
  auto saved = [&](size_t i) {
    return i < f.outputs.size() && contains(op.inputs, f.outputs[i]) ? vec(f.outputs, i, s.rows)
                                                                     : side(static_cast<uint64_t>(s.rows) * 4);
  };
  const TensorId dx = find_shaped(g, op.outputs, g.tensor(x).shape);
  std::vector<TensorId> dparams;
  for (TensorId id : op.outputs)
    if (id != dx && g.tensor(id).shape == vshape) dparams.push_back(id);
  if (dx != kNoTensor) {
    s.call = KernelCall::LayerNormBackward;
    s.args = {{arg(g, x), arg(g, dy), vec(f.inputs, 1, s.cols), saved(1), saved(2)}, {arg(g, dx)}};
    kp.steps.push_back(s);
  }
  if (!dparams.empty()) {
    // dgamma = sum over rows of dy * xhat, dbeta = sum of dy: outputs in the forward's order [dgamma, dbeta].
    KernelStep p = s;
    p.call = KernelCall::LayerNormParamGrad;
    p.args = {{arg(g, x), arg(g, dy), saved(1), saved(2)},
              {arg(g, dparams[0]), dparams.size() > 1 ? arg(g, dparams[1]) : side(static_cast<uint64_t>(s.cols) * 4)}};
    kp.steps.push_back(p);
  }
  if (kp.steps.empty()) fail(g, op, "layer norm backward writes no gradient");
}

void translate_cross_entropy(const Graph& g, const Op& op, OpTranslation& kp) {
  // [logits, labels] -> [loss, log_probs]; backward [log_probs, labels] -> [dlogits] (autograd keeps the
  // log-probabilities, not the logits).
  const Op& f = op.kind == OpKind::CrossEntropyLoss ? op : forward_of(g, op);
  const TensorId logits = need_in(g, f, 0);
  KernelStep s;
  set_rows(s, g.tensor(logits));
  // The logits may be the unflattened [N, C, 1, 1] tensor (views elided): the builder's classes attribute rules.
  if (f.has_attr(Attr::classes)) s.cols = f.attr(Attr::classes);
  if (s.cols <= 0 || numel(g.tensor(logits)) % s.cols != 0) fail(g, f, "logits are not a whole number of rows");
  s.rows = numel(g.tensor(logits)) / s.cols;
  if (g.tensor(logits).dtype != DType::F32) fail(g, f, "cross entropy runs in fp32 (autocast casts its input up)");
  TensorId target = kNoTensor;
  for (TensorId id : f.inputs)
    if (id != logits && (g.tensor(id).dtype == DType::I64 || g.tensor(id).dtype == DType::I32)) target = id;
  if (target != kNoTensor && (g.tensor(target).dtype != DType::I64 || numel(g.tensor(target)) != s.rows))
    fail(g, f, "class targets must be one int64 per row");
  const Arg t = target == kNoTensor ? side(static_cast<uint64_t>(s.rows) * 8, DType::I64) : arg(g, target);
  const TensorId logp = f.outputs.size() > 1 ? f.outputs[1] : kNoTensor;
  if (logp != kNoTensor && numel(g.tensor(logp)) != s.rows * s.cols) fail(g, f, "log_probs is not of the logits' size");
  const Arg lp = logp != kNoTensor ? arg(g, logp) : side(static_cast<uint64_t>(s.rows * s.cols) * 4);
  if (op.kind == OpKind::CrossEntropyLoss) {
    s.call = KernelCall::CrossEntropyForward;
    s.args = {{arg(g, logits), t}, {arg(g, need_out(g, op, 0)), lp}};
  } else {
    const TensorId dlogits = require(g, op, find_shaped(g, op.outputs, g.tensor(logits).shape), "logit gradient");
    s.call = KernelCall::CrossEntropyBackward;
    s.args = {{contains(op.inputs, lp.id) ? lp : side(lp.bytes), t}, {arg(g, dlogits)}};
  }
  kp.steps.push_back(s);
}

}  // namespace

void translate_rowwise(const Graph& g, const Op& op, OpTranslation& kp) {
  start_ours(g, op, kp);
  switch (op.kind) {
    case OpKind::LayerNorm: case OpKind::LayerNormBwd: translate_layer_norm(g, op, kp); return;
    case OpKind::Embedding: case OpKind::EmbeddingBwd: {
      // [ids, table] -> [y]; backward [dy, ids] -> [dtable], a scatter-add into a zeroed table gradient.
      const Op& f = op.kind == OpKind::Embedding ? op : forward_of(g, op);
      const TensorId ids = need_in(g, f, 0), table = need_in(g, f, 1);
      if (g.tensor(ids).dtype != DType::I64) fail(g, f, "embedding indices must be int64");
      if (g.tensor(table).shape.size() != 2 || g.tensor(table).dtype != DType::F32)
        fail(g, f, "embedding table must be a 2-d fp32 tensor");
      KernelStep s;
      s.rows = numel(g.tensor(ids));
      s.cols = g.tensor(table).shape[1];
      if (op.kind == OpKind::Embedding) {
        s.call = KernelCall::EmbeddingForward;
        s.args = {{arg(g, ids), arg(g, table)}, {arg(g, need_out(g, op, 0))}};
      } else {
        const TensorId dy = output_grad(g, op, f);
        const TensorId dtable = require(g, op, find_shaped(g, op.outputs, g.tensor(table).shape), "table gradient");
        if (!contains(op.inputs, ids)) fail(g, op, "embedding backward does not keep its indices");
        kp.steps.push_back(fill_zero(arg(g, dtable)));  // the scatter accumulates, as PyTorch's does
        s.call = KernelCall::EmbeddingBackward;
        s.args = {{arg(g, ids), arg(g, dy)}, {arg(g, dtable)}};
      }
      kp.steps.push_back(s);
      return;
    }
    case OpKind::CrossEntropyLoss: case OpKind::CrossEntropyLossBwd: translate_cross_entropy(g, op, kp); return;
    default:
      fail(g, op, std::string("not a row-wise op: ") + to_string(op.kind));
  }
}

}  // namespace dlsim::validate_internal
