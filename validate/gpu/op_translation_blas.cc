// The translation plan's cuBLAS products: linear layers and (batched) matrix products.
#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {

// Row-major shapes: Linear y[M, out] = x[M, in] * W[out, in]^T (+ b), inputs [x, w, (b)] by position (under
// autocast w and b are their bf16 casts, activations rather than weights).
void translate_linear(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::Linear ? op : forward_of(g, op);
  kp.lib = KernelLib::Cublas;
  const TensorId x = need_in(g, fwd, 0), w = need_in(g, fwd, 1), y = need_out(g, fwd, 0);
  const TensorId b = fwd.inputs.size() > 2 ? fwd.inputs[2] : kNoTensor;
  if (g.tensor(w).shape.size() != 2) fail(g, fwd, "linear weight must be 2-d");
  kp.dtype = same_dtype(g, op, {x, y, w, b});
  const int64_t out_f = g.tensor(w).shape[0], in_f = g.tensor(w).shape[1];
  // The input may be the unflattened tensor (training graphs elide views): only its size must fit.
  if (numel(g.tensor(x)) % in_f != 0 || numel(g.tensor(y)) != numel(g.tensor(x)) / in_f * out_f)
    fail(g, fwd, "input and output sizes do not match the weight");
  if (b != kNoTensor && g.tensor(b).shape != std::vector<int64_t>{out_f}) fail(g, fwd, "bias is not of out_features");
  const int64_t rows = numel(g.tensor(x)) / in_f;
  KernelStep s;
  if (op.kind == OpKind::Linear) {
    s.call = KernelCall::Gemm;
    s.args = {{arg(g, x), arg(g, w)}, {arg(g, y)}};
    s.gemm = {rows, out_f, in_f, false, true, 1};
    kp.steps.push_back(s);
    if (b != kNoTensor) {
      KernelStep bs;
      bs.call = KernelCall::BiasAdd;
      bs.args = {{arg(g, b)}, {arg(g, y)}};
      bs.rows = rows, bs.cols = out_f;
      kp.steps.push_back(bs);
    }
    return;
  }
  const TensorId dy = output_grad(g, op, fwd);
  same_dtype(g, op, {x, dy});
  s.call = KernelCall::Gemm;
  if (op.kind == OpKind::LinearBwdData) {  // dx[M, in] = dy[M, out] * W[out, in]
    const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
    same_dtype(g, op, {x, dx});
    s.args = {{arg(g, dy), arg(g, w)}, {arg(g, dx)}};
    s.gemm = {rows, in_f, out_f, false, false, 1};
    kp.steps.push_back(s);
    return;
  }
  // dW[out, in] = dy[M, out]^T * x[M, in]; db[out] = sum over rows of dy. Outputs [dW, (db)].
  const TensorId dw = require(g, op, find_shaped(g, op.outputs, g.tensor(w).shape), "weight gradient");
  same_dtype(g, op, {x, dw});
  s.args = {{arg(g, dy), arg(g, x)}, {arg(g, dw)}};
  s.gemm = {out_f, in_f, rows, true, false, 1};
  kp.steps.push_back(s);
  if (b != kNoTensor) {
    const TensorId db = find_shaped(g, op.outputs, g.tensor(b).shape, {dw});
    KernelStep bs;
    bs.call = KernelCall::BiasGrad;
    bs.args = {{arg(g, dy)}, {db == kNoTensor ? side(g.tensor(b).bytes, g.tensor(b).dtype) : arg(g, db)}};
    bs.rows = rows, bs.cols = out_f;
    kp.steps.push_back(bs);
  }
}

// MatMul a[..., m, k] * b[..., k, n]: a strided batched GEMM, or one GEMM over all rows when b has no batch.
// The backward's tensors follow training.cc: inputs [dy, (b if da), (a if db)], outputs [(da), (db)]; which
// gradients exist is read from which operand the backward keeps, so equal shapes (q and k^T at seq = head
// size) cannot swap them.
void translate_matmul(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::MatMul ? op : forward_of(g, op);
  kp.lib = KernelLib::Cublas;
  const TensorId a = need_in(g, fwd, 0), b = need_in(g, fwd, 1), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {a, b, y});
  const auto& as = g.tensor(a).shape;
  const auto& bs = g.tensor(b).shape;
  if (as.size() < 2 || bs.size() < 2) fail(g, op, "matmul operands must have at least 2 dimensions");
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k) fail(g, op, "matmul inner dimensions do not match");
  const int64_t batch_a = numel(g.tensor(a)) / (m * k), batch_b = numel(g.tensor(b)) / (k * n);
  if (batch_b != 1 && batch_b != batch_a) fail(g, op, "matmul batch dimensions do not match (only b may be shared)");
  if (numel(g.tensor(y)) != batch_a * m * n) fail(g, op, "matmul output size does not match its operands");
  const bool flat = batch_b == 1;  // b shared: fold a's batch into its rows
  const int64_t rows = flat ? batch_a * m : m, batch = flat ? 1 : batch_a;
  const KernelCall call = batch > 1 ? KernelCall::GemmStridedBatched : KernelCall::Gemm;
  KernelStep s;
  s.call = call;
  if (op.kind == OpKind::MatMul) {
    s.args = {{arg(g, a), arg(g, b)}, {arg(g, y)}};
    s.gemm = {rows, n, k, false, false, batch};
    kp.steps.push_back(s);
    return;
  }
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {a, b}), "output gradient");
  const bool has_da = a != b ? contains(op.inputs, b) : true;
  const bool has_db = a != b ? contains(op.inputs, a) : op.outputs.size() > 1;
  size_t next = 0;
  auto grad = [&](const std::vector<int64_t>& shape, const char* role) {
    const TensorId id = require(g, op, next < op.outputs.size() ? op.outputs[next++] : kNoTensor, role);
    if (g.tensor(id).shape != shape) fail(g, op, std::string(role) + " does not have its operand's shape");
    same_dtype(g, op, {dy, id});
    return id;
  };
  if (has_da) {  // da = dy * b^T
    const TensorId da = grad(as, "first operand's gradient");
    s.args = {{arg(g, dy), arg(g, b)}, {arg(g, da)}};
    s.gemm = {rows, k, n, false, true, batch};
    kp.steps.push_back(s);
  }
  if (has_db) {  // db = a^T * dy (summed over a's batch when b is shared: the folded rows do it)
    const TensorId db = grad(bs, "second operand's gradient");
    s.args = {{arg(g, a), arg(g, dy)}, {arg(g, db)}};
    s.gemm = {k, n, rows, true, false, batch};
    kp.steps.push_back(s);
  }
  if (kp.steps.empty()) fail(g, op, "matmul backward keeps neither operand, so it computes no gradient");
}

}  // namespace dlsim::validate_internal
