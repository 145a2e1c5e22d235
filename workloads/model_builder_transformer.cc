// ModelBuilder's transformer layers (BERT, GPT-2): dropout, softmax, layer norm, GELU, tanh, and the fused forms
// of bias + GELU and of scale + mask + softmax + dropout (BuildOptions::fused).
#include "workloads/model_builder.h"

#include <cmath>

#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

TensorId ModelBuilder::dropout(TensorId x, double p, const std::string& name) {
  std::string n = auto_name("dropout", name);
  auto s = shape_of(g_, x, n);
  if (!(p >= 0 && p < 1)) fail(g_, n, "dropout probability must be in [0, 1)");
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  // CUDA's fused dropout (native_dropout) keeps a bool mask; see training.cc for the CPU difference.
  TensorId mask = new_tensor(g_, n + ".mask", TensorKind::Activation, DType::Bool, s);
  emit(g_, n, OpKind::Dropout, {x}, {y, mask}, 2.0 * static_cast<double>(numel(s)),
       {{Attr::p_ppm, static_cast<int64_t>(std::llround(p * 1e6))}});
  return y;
}

TensorId ModelBuilder::softmax(TensorId x, int64_t axis, const std::string& name) {
  std::string n = auto_name("softmax", name);
  auto s = shape_of(g_, x, n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(s.size())) fail(g_, n, "softmax axis " + std::to_string(axis) + " out of range");
  TensorId cx = cast_for(x, fp32_op_dtype(), n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(cx).dtype, s);
  emit(g_, n, OpKind::Softmax, {cx}, {y}, 5.0 * static_cast<double>(numel(s)), {{Attr::axis, ax}});
  return y;
}

TensorId ModelBuilder::softmax_fp32(TensorId x, int64_t axis, const std::string& name) {
  std::string n = auto_name("softmax", name);
  auto s = shape_of(g_, x, n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(s.size())) fail(g_, n, "softmax axis " + std::to_string(axis) + " out of range");
  TensorId cx = cast(x, DType::F32, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, DType::F32, s);
  emit(g_, n, OpKind::Softmax, {cx}, {y}, 5.0 * static_cast<double>(numel(s)), {{Attr::axis, ax}});
  return y;
}

TensorId ModelBuilder::scaled_masked_softmax_dropout(TensorId x, TensorId mask, TensorId scale, double p,
                                                     const std::string& prefix) {
  if (!opts_.fused) {
    TensorId scores = add(mul(x, scale, prefix + "scale"), mask, false, prefix + "mask");
    return dropout(softmax(scores, -1, prefix + "softmax"), p, prefix + "attn_dropout");
  }
  const std::string n = auto_name("softmax", prefix + "softmax");
  auto s = shape_of(g_, x, n);
  broadcast(g_, s, shape_of(g_, mask, n), n);  // the mask must broadcast to the scores
  if (!(p >= 0 && p < 1)) fail(g_, n, "dropout probability must be in [0, 1)");
  const DType dt = g_.tensor(x).dtype;
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, dt, s);
  TensorId keep = new_tensor(g_, n + ".dropout_mask", TensorKind::Activation, DType::Bool, s);
  TensorId probs = new_tensor(g_, n + ".probs", TensorKind::Activation, dt, s);
  // scale, mask, softmax (5) and dropout (2) per element.
  emit(g_, n, OpKind::Softmax, {x, mask, scale}, {y, keep, probs}, 9.0 * static_cast<double>(numel(s)),
       {{Attr::axis, static_cast<int64_t>(s.size()) - 1}, {Attr::fused_mask_dropout, 1},
        {Attr::p_ppm, static_cast<int64_t>(std::llround(p * 1e6))}});
  return y;
}

TensorId ModelBuilder::layer_norm(TensorId x, const std::string& name) {
  std::string n = auto_name("ln", name);
  auto s = shape_of(g_, x, n);
  if (s.empty()) fail(g_, n, "layer norm of a scalar");
  TensorId gamma = parameter({s.back()}, n + ".weight"), beta = parameter({s.back()}, n + ".bias");
  TensorId cx = cast_for(x, fp32_op_dtype(), n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(cx).dtype, s);
  std::vector<int64_t> rs(s.begin(), s.end() - 1);
  if (rs.empty()) rs.push_back(1);
  TensorId mean = new_tensor(g_, n + ".mean", TensorKind::Activation, DType::F32, rs);
  TensorId rstd = new_tensor(g_, n + ".rstd", TensorKind::Activation, DType::F32, rs);
  emit(g_, n, OpKind::LayerNorm, {cx, gamma, beta}, {y, mean, rstd}, 5.0 * static_cast<double>(numel(s)),
       {{Attr::normalized, s.back()}});
  return y;
}

TensorId ModelBuilder::gelu(TensorId x, const std::string& name) {
  std::string n = auto_name("gelu", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n, OpKind::Gelu, {x}, {y}, 8.0 * static_cast<double>(numel(s)));
  return y;
}

// `x op c` for a Python scalar c: one input, the tensor's dtype (a Python scalar does not promote), and autograd
// keeps nothing for it (MulBackward1 and AddBackward1 hold the scalar itself).
TensorId workloads_internal::scalar_op(Graph& g, OpKind kind, TensorId x, const std::string& name) {
  // By value: new_tensor adds to the graph's tensors, which may move them.
  const DType dtype = g.tensor(x).dtype;
  const std::vector<int64_t> shape = g.tensor(x).shape;
  TensorId y = new_tensor(g, name + ".out", TensorKind::Activation, dtype, shape);
  AttrValues attrs;
  if (kind == OpKind::Add) attrs.push_back({Attr::inplace, 0});
  emit(g, name, kind, {x}, {y}, static_cast<double>(numel(shape)), attrs);
  return y;
}

// transformers' NewGELUActivation ("gelu_new"), 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3)))),
// as eager PyTorch runs it: one kernel per operator, in Python's order (the profiled H200 step,
// results/fidelity/data/h200-2026-11-28/traces.tar, runs exactly these per layer). Under CUDA autocast pow is an
// fp32 op, so x is cast to fp32 first (a copy kernel) and everything after it is fp32: the add promotes (bf16 x +
// fp32), and the final product of the bf16 0.5 * x and the fp32 1 + tanh is fp32. What autograd keeps: pow's
// input (x, or its fp32 cast), tanh's output, and the final product's two factors (0.5 * x and 1 + tanh); the
// products by and sums with a Python scalar keep nothing, so pow's output and the three tensors before tanh are
// freed as soon as the next op has read them. The backward is the synthesizer's, op by op (training_backward.cc).
TensorId ModelBuilder::gelu_tanh_formula(TensorId x, const std::string& name) {
  std::string n = auto_name("gelu", name);
  shape_of(g_, x, n);
  const DType xd = g_.tensor(x).dtype, wide = autocast() ? DType::F32 : xd;
  TensorId half_x = scalar_op(g_, OpKind::Mul, x, n + ".half_x");  // 0.5 * x
  TensorId xw = cast(x, wide, n + ".pow");                          // autocast: pow's input in fp32
  const std::vector<int64_t> xs = g_.tensor(xw).shape;  // by value: new_tensor may move the graph's tensors
  TensorId cube = new_tensor(g_, n + ".pow.out", TensorKind::Activation, wide, xs);
  emit_other(g_, n + ".pow", OtherOp::Pow, {xw}, {cube}, 2.0 * static_cast<double>(numel(xs)));
  TensorId inner = add(x, scalar_op(g_, OpKind::Mul, cube, n + ".mul_cube"), false, n + ".add_x");  // x + 0.044715 x^3
  TensorId t = tanh(scalar_op(g_, OpKind::Mul, inner, n + ".mul_sqrt_2_over_pi"), n + ".tanh");
  TensorId one_plus_t = scalar_op(g_, OpKind::Add, t, n + ".one_plus_tanh");
  return mul(half_x, one_plus_t, n + ".mul");
}

TensorId ModelBuilder::linear_gelu(TensorId x, int64_t out_features, const std::string& linear_name,
                                   const std::string& gelu_name) {
  if (!opts_.fused) return gelu(linear(x, out_features, true, linear_name), gelu_name);
  TensorId h = linear(x, out_features, false, linear_name);
  std::string n = auto_name("gelu", gelu_name);
  auto s = shape_of(g_, h, n);
  TensorId bias = cast_for(parameter({out_features}, linear_name + ".bias"), act_dtype_, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(h).dtype, s);
  // 8 per element, as the eager Gelu: the bias add is not counted in either form (Linear counts its MACs only).
  emit(g_, n, OpKind::Gelu, {h, bias}, {y}, 8.0 * static_cast<double>(numel(s)), {{Attr::fused_bias, 1}});
  return y;
}

TensorId ModelBuilder::tanh(TensorId x, const std::string& name) {
  std::string n = auto_name("tanh", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit_other(g_, n, OtherOp::Tanh, {x}, {y}, static_cast<double>(numel(s)));
  return y;
}

}  // namespace dlsim
