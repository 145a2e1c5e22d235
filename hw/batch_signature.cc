#include "hw/batch_signature.h"

namespace dlsim {
namespace {

bool carries_batch(const Graph& g, const Tensor& t) {
  if (t.persistent) return false;
  if (t.kind == TensorKind::Activation || t.kind == TensorKind::Input) return true;
  // A gradient carries the batch when what it is the gradient of does (dy of an activation, not dW).
  if (t.kind == TensorKind::Gradient && t.grad_of != kNoTensor) {
    const Tensor& of = g.tensor(t.grad_of);
    return !of.persistent && (of.kind == TensorKind::Activation || of.kind == TensorKind::Input);
  }
  return false;
}

// One tensor as op_signature writes it, with the leading dimension relative to the batch where it carries it.
bool append_tensors(std::string& s, const Graph& g, const std::vector<TensorId>& ids) {
  bool any = false, first = true;
  for (TensorId id : ids) {
    if (!first) s += ';';
    first = false;
    if (id == kNoTensor) {
      s += '-';
      continue;
    }
    const Tensor& t = g.tensor(id);
    s += to_string(t.dtype);
    s += '[';
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i) s += ',';
      const int64_t d = t.shape[i];
      if (i == 0 && g.batch > 0 && d > 0 && d % g.batch == 0 && carries_batch(g, t)) {
        s += d == g.batch ? "B" : "B*" + std::to_string(d / g.batch);
        any = true;
      } else {
        s += std::to_string(d);
      }
    }
    s += ']';
  }
  return any;
}

}  // namespace

std::optional<BatchFreeSignature> batch_free_signature(const Graph& g, const Op& op) {
  std::string s = to_string(op.kind);
  s += " in=";
  bool any = append_tensors(s, g, op.inputs);
  s += " out=";
  any = append_tensors(s, g, op.outputs) || any;
  if (!any) return std::nullopt;
  s += " attrs=";
  bool first = true;
  for (const auto& [k, v] : op.attrs.all()) {
    // Attributes that count the batch: `macs` (it follows from the shapes, so it is left out) and the row or
    // batch count of a linear, loss or batched-matmul op (written like a leading dimension).
    if (k == "macs") continue;
    if (!first) s += ',';
    first = false;
    const bool counts_batch = (k == "rows" || k == "batch") && v > 0 && v % g.batch == 0;
    s += k + "=" + (counts_batch ? (v == g.batch ? std::string("B") : "B*" + std::to_string(v / g.batch)) : std::to_string(v));
  }
  return BatchFreeSignature{s, g.batch};
}

}  // namespace dlsim
