// ModelBuilder's dense arithmetic: linear layers and matrix products (autocast's 16-bit ops), elementwise add and
// multiply, the embedding lookup and the cross-entropy loss.
#include "workloads/model_builder.h"

#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

TensorId ModelBuilder::linear(TensorId x, int64_t out_features, bool bias, const std::string& name) {
  std::string n = auto_name("fc", name);
  auto s = shape_of(g_, x, n);
  if (s.empty() || out_features <= 0) fail(g_, n, "linear needs an input with a feature axis and positive out_features");
  TensorId w = parameter({out_features, s.back()}, n + ".weight");
  return linear_with_weight(x, w, bias, n);
}

TensorId ModelBuilder::linear_with_weight(TensorId x, TensorId weight, bool bias, const std::string& name) {
  std::string n = auto_name("fc", name);
  auto s = shape_of(g_, x, n);
  auto ws = shape_of(g_, weight, n);
  if (ws.size() != 2 || s.empty() || s.back() != ws[1])
    fail(g_, n, "linear input " + shape_str(s) + " does not match weight " + shape_str(ws));
  int64_t in_f = ws[1], out_f = ws[0];
  std::vector<TensorId> in = {cast_for(x, act_dtype_, n), cast_for(weight, act_dtype_, n)};
  if (bias) in.push_back(cast_for(parameter({out_f}, n + ".bias"), act_dtype_, n));
  std::vector<int64_t> os = s;
  os.back() = out_f;
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, act_dtype_, os);
  const int64_t rows = numel(s) / in_f, macs = checked_macs(g_, n, {rows, in_f, out_f});
  const OpId id = emit(g_, n, OpKind::Linear, in, {y}, 2.0 * static_cast<double>(macs),
                       {{Attr::in_features, in_f}, {Attr::out_features, out_f}, {Attr::rows, rows}, {Attr::bias, bias},
                        {Attr::macs, macs}});
  mark_tf32(g_.op(id), false);
  return y;
}

// numpy/torch.matmul semantics for rank >= 2: (..., M, K) @ (..., K, N) with broadcast batch axes.
TensorId ModelBuilder::matmul(TensorId a, TensorId b, const std::string& name, bool transpose_b) {
  std::string n = auto_name("matmul", name);
  auto sa = shape_of(g_, a, n), sb = shape_of(g_, b, n);
  if (sb.size() >= 2 && transpose_b) std::swap(sb[sb.size() - 1], sb[sb.size() - 2]);
  if (sa.size() < 2 || sb.size() < 2 || sa.back() != sb[sb.size() - 2])
    fail(g_, n, "matmul shapes " + shape_str(sa) + " and " + shape_str(sb) + " do not match");
  int64_t m = sa[sa.size() - 2], k = sa.back(), nn = sb.back();
  auto batch = broadcast(g_, std::vector<int64_t>(sa.begin(), sa.end() - 2), std::vector<int64_t>(sb.begin(), sb.end() - 2), n);
  std::vector<int64_t> os = batch;
  os.push_back(m);
  os.push_back(nn);
  const int64_t nb = numel(batch), macs = checked_macs(g_, n, {nb, m, k, nn});
  TensorId ca = cast_for(a, act_dtype_, n), cb = cast_for(b, act_dtype_, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, act_dtype_, os);
  const OpId id = emit(g_, n, OpKind::MatMul, {ca, cb}, {y}, 2.0 * static_cast<double>(macs),
                       {{Attr::batch, nb}, {Attr::m, m}, {Attr::k, k}, {Attr::n, nn}, {Attr::macs, macs}});
  if (transpose_b) g_.op(id).set_attr(Attr::transpose_b, 1);
  mark_tf32(g_.op(id), false);
  return y;
}

TensorId ModelBuilder::add(TensorId a, TensorId b, bool inplace, const std::string& name) {
  std::string n = auto_name("add", name);
  auto os = broadcast(g_, shape_of(g_, a, n), shape_of(g_, b, n), n);
  DType dt = wider(g_.tensor(a).dtype, g_.tensor(b).dtype);
  if (inplace && (os != g_.tensor(a).shape || dt != g_.tensor(a).dtype)) fail(g_, n, "in-place add cannot change its left operand's shape or dtype");
  TensorId y = inplace ? a : new_tensor(g_, n + ".out", TensorKind::Activation, dt, os);
  emit(g_, n, OpKind::Add, {a, b}, {y}, static_cast<double>(numel(os)), {{Attr::inplace, inplace}});
  return y;
}

TensorId ModelBuilder::mul(TensorId a, TensorId b, const std::string& name) {
  std::string n = auto_name("mul", name);
  auto os = broadcast(g_, shape_of(g_, a, n), shape_of(g_, b, n), n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(g_.tensor(a).dtype, g_.tensor(b).dtype), os);
  emit(g_, n, OpKind::Mul, {a, b}, {y}, static_cast<double>(numel(os)));
  return y;
}

// The embedding output has the table's dtype: fp32 even under autocast (embedding is on none of autocast's lists).
TensorId ModelBuilder::embedding(TensorId ids, int64_t vocab, int64_t dim, const std::string& name) {
  std::string n = auto_name("embedding", name);
  auto s = shape_of(g_, ids, n);
  if (vocab <= 0 || dim <= 0) fail(g_, n, "embedding vocab and dim must be positive");
  DType it = g_.tensor(ids).dtype;
  if (it != DType::I64 && it != DType::I32) fail(g_, n, "embedding ids must be integers");
  TensorId w = parameter({vocab, dim}, n + ".weight");
  std::vector<int64_t> os = s;
  os.push_back(dim);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, opts_.weights, os);
  emit(g_, n, OpKind::Embedding, {ids, w}, {y}, 0, {{Attr::vocab, vocab}, {Attr::dim, dim}});
  return y;
}

// log_softmax + nll_loss (mean reduction) over the last axis; the labels, one int64 per row, an input of the batch
// unless given.
TensorId ModelBuilder::cross_entropy_loss(TensorId logits, const std::string& name, TensorId labels) {
  std::string n = auto_name("loss", name);
  auto s = shape_of(g_, logits, n);
  if (s.size() < 2) fail(g_, n, "cross entropy needs (rows, classes) logits, got " + shape_str(s));
  int64_t classes = s.back(), rows = numel(s) / classes;
  if (labels == kNoTensor) {
    labels = input({rows}, DType::I64, n + ".labels");
  } else if (g_.tensor(labels).dtype != DType::I64 || numel(shape_of(g_, labels, n)) != rows) {
    fail(g_, n, "cross entropy needs one int64 label per row (" + std::to_string(rows) + "), got " +
                    to_string(g_.tensor(labels).dtype) + shape_str(g_.tensor(labels).shape));
  }
  // Autocast runs the loss in fp32; without it the loss keeps its input's dtype (a bf16 model's logits.float()
  // stays fp32).
  TensorId cx = cast_for(logits, autocast() ? DType::F32 : g_.tensor(logits).dtype, n);
  const DType dt = g_.tensor(cx).dtype;
  TensorId loss = new_tensor(g_, n + ".out", TensorKind::Activation, dt, {1});
  TensorId logp = new_tensor(g_, n + ".log_probs", TensorKind::Activation, dt, {rows, classes});
  emit(g_, n, OpKind::CrossEntropyLoss, {cx, labels}, {loss, logp}, 5.0 * static_cast<double>(rows * classes),
       {{Attr::classes, classes}, {Attr::rows, rows}});
  return loss;
}

}  // namespace dlsim
