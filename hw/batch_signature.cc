#include "hw/batch_signature.h"

#include "hw/internal/signature_writer.h"

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

// A count of whole batches as the key writes it: "B", or "B*k".
std::string batches(int64_t v, int64_t batch) { return v == batch ? "B" : "B*" + std::to_string(v / batch); }

}  // namespace

std::optional<BatchFreeSignature> batch_free_signature(const Graph& g, const Op& op) {
  bool any = false;  // whether some dimension carried the batch
  const hw_internal::SignatureStyle batch_free{
      [&](const Tensor& t, size_t i) {
        const int64_t d = t.shape[i];
        if (i == 0 && g.batch > 0 && d > 0 && d % g.batch == 0 && carries_batch(g, t)) {
          any = true;
          return batches(d, g.batch);
        }
        return std::to_string(d);
      },
      // Attributes that count the batch: `macs` (it follows from the shapes, so it is left out) and the row or
      // batch count of a linear, loss or batched-matmul op (written like a leading dimension).
      [&](const std::string& k, int64_t v) -> std::optional<std::string> {
        if (k == to_string(Attr::macs)) return std::nullopt;
        if ((k == to_string(Attr::rows) || k == to_string(Attr::batch)) && v > 0 && g.batch > 0 && v % g.batch == 0)
          return batches(v, g.batch);
        return std::to_string(v);
      }};
  std::string key = hw_internal::write_signature(g, op, batch_free);
  if (!any) return std::nullopt;
  return BatchFreeSignature{std::move(key), g.batch};
}

}  // namespace dlsim
