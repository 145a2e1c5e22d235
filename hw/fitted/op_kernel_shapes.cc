#include "hw/fitted/op_kernel_shapes.h"

#include "hw/fitted/concat_kernels.h"
#include "hw/fitted/conv_backend.h"
#include "hw/fitted/kernel_terms.h"
#include "hw/fitted/multi_tensor.h"
#include "hw/math_path.h"
#include "hw/op_class.h"
#include "workloads/shape.h"

namespace dlsim {
namespace {

bool fitted_is_16bit(DType t) { return t == DType::F16 || t == DType::BF16; }

// The convolution's kernel, then cuDNN's layout transposes around it where it runs them, then its bias's kernels.
std::optional<std::vector<KernelShape>> conv_shapes_of_op(const GpuSpec& spec, const Graph& g, const Op& op) {
  const auto z = conv_sizes_of_op(g, op);
  if (!z) return std::nullopt;
  const KernelFamily pass = op.kind == OpKind::Conv2d          ? KernelFamily::ConvFwd
                            : op.kind == OpKind::Conv2dBwdData ? KernelFamily::ConvDgrad
                                                               : KernelFamily::ConvWgrad;
  const MathPath path = math_path(spec, g, op);
  const uint32_t eb = dtype_bytes(compute_dtype(g, op));
  std::vector<KernelShape> v{conv_kernel_shape(pass, *z, path, eb)};
  for (KernelShape& t : conv_layout_transposes(pass, *z, path, eb)) v.push_back(std::move(t));
  // The bias: its add after the forward, its gradient's sum with the weight's (the op writes both gradients then).
  const bool bias = op.declares(Attr::bias) && op.attr(Attr::bias) != 0;
  if (bias && (op.kind == OpKind::Conv2d || (op.kind == OpKind::Conv2dBwdFilter && op.outputs.size() >= 2)))
    for (KernelShape& b : conv_bias_kernels(pass, *z, path, compute_dtype(g, op))) v.push_back(std::move(b));
  return v;
}

// The matrix products of a Linear or MatMul op (forward or backward) as (batch, m, n, k) with C = m x n.
std::vector<KernelShape> gemm_shapes_of_op(const GpuSpec& spec, const Graph& g, const Op& op) {
  const MathPath path = math_path(spec, g, op);
  const uint32_t eb = dtype_bytes(compute_dtype(g, op));
  auto a = [&](Attr x) { return static_cast<double>(op.attr(x)); };
  switch (op.kind) {
    case OpKind::Linear: return {gemm_kernel_shape(1, a(Attr::rows), a(Attr::out_features), a(Attr::in_features), path, eb)};
    case OpKind::LinearBwdData:
      return {gemm_kernel_shape(1, a(Attr::rows), a(Attr::in_features), a(Attr::out_features), path, eb)};
    case OpKind::LinearBwdWeight:
      return {gemm_kernel_shape(1, a(Attr::out_features), a(Attr::in_features), a(Attr::rows), path, eb)};
    case OpKind::MatMul: return {gemm_kernel_shape(a(Attr::batch), a(Attr::m), a(Attr::n), a(Attr::k), path, eb)};
    default: break;
  }
  // MatMulBwd: dA = dC B^T (m x k, reducing n) and/or dB = A^T dC (k x n, reducing m), as the op's gradients are.
  std::vector<KernelShape> v;
  bool grad_a = true, grad_b = true;
  if (op.forward_op >= 0 && op.inputs.size() == 2) {
    const Op& fwd = g.op(op.forward_op);
    grad_a = fwd.inputs.size() > 1 && op.inputs[1] == fwd.inputs[1];  // reads B: computes dA
    grad_b = !grad_a;
  }
  if (grad_a) v.push_back(gemm_kernel_shape(a(Attr::batch), a(Attr::m), a(Attr::k), a(Attr::n), path, eb));
  if (grad_b) v.push_back(gemm_kernel_shape(a(Attr::batch), a(Attr::k), a(Attr::n), a(Attr::m), path, eb));
  return v;
}

KernelShape memory_shape_of_op(const Graph& g, const Op& op, KernelFamily f) {
  KernelShape s;
  s.family = f;
  s.dtype = compute_dtype(g, op);
  s.bytes = static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written);
  if (op.kind == OpKind::LayerNorm || op.kind == OpKind::LayerNormBwd) {
    // Its rows: the first input's elements (x, or the backward's dy of x's shape) over the normalised width.
    s.backward = op.kind == OpKind::LayerNormBwd;
    int64_t width = op.has_attr(Attr::normalized) ? op.attr(Attr::normalized) : 0;
    if (width <= 0 && op.forward_op >= 0 && g.op(op.forward_op).has_attr(Attr::normalized))
      width = g.op(op.forward_op).attr(Attr::normalized);
    if (width > 0 && !op.inputs.empty()) s.rows = static_cast<double>(numel(g.tensor(op.inputs[0]).shape)) / static_cast<double>(width);
  }
  if (f == KernelFamily::BatchNorm) {  // its channels: the op's, else its forward op's (a backward's)
    s.backward = op.kind == OpKind::BatchNormBwd;
    if (op.has_attr(Attr::channels)) s.channels = static_cast<double>(op.attr(Attr::channels));
    else if (op.forward_op >= 0 && g.op(op.forward_op).has_attr(Attr::channels))
      s.channels = static_cast<double>(g.op(op.forward_op).attr(Attr::channels));
  }
  return s;
}

// A windowed max or average pool (forward or backward: the kernel size its own or its forward op's), as its family
// with the bytes its windows read; nullopt for any other op (a global or adaptive average pool is a reduction).
std::optional<KernelShape> pool_shape_of_op(const Graph& g, const Op& op) {
  const bool max = op.kind == OpKind::MaxPool || op.kind == OpKind::MaxPoolBwd;
  const bool backward = op.kind == OpKind::MaxPoolBwd || op.kind == OpKind::AvgPoolBwd;
  if (!max && op.kind != OpKind::AvgPool && op.kind != OpKind::AvgPoolBwd) return std::nullopt;
  auto kernel_of = [](const Op& o) {
    return o.declares(Attr::kernel) && o.has_attr(Attr::kernel) ? o.attr(Attr::kernel) : int64_t{0};
  };
  const Op* fwd = backward && op.forward_op >= 0 ? &g.op(op.forward_op) : nullptr;
  const int64_t kernel = kernel_of(op) > 0 || fwd == nullptr ? kernel_of(op) : kernel_of(*fwd);
  if (kernel <= 0) return std::nullopt;  // a global or adaptive pool's backward
  // The pooled output: the forward's result; a backward's incoming gradient (its first input) of the same shape.
  const std::vector<TensorId>& from = backward ? (fwd ? fwd->outputs : op.inputs) : op.outputs;
  if (from.empty()) return std::nullopt;
  KernelShape s = memory_shape_of_op(g, op, max ? KernelFamily::MaxPool : KernelFamily::AvgPool);
  s.backward = backward;
  const double window = static_cast<double>(kernel * kernel);
  s.window_bytes = static_cast<double>(numel(g.tensor(from[0]).shape)) * window * dtype_bytes(s.dtype);
  return s;
}

// An op charged with multi-tensor launches (the zoo's foreach SGD update, a recorded torch._foreach_* op), where the
// file has its dtype's multi_tensor class; nullopt where it has none (the op is then priced as before).
std::optional<KernelShape> multi_tensor_shape_of_op(const GpuSpec& spec, const Graph& g, const Op& op) {
  const bool charged =
      op.kind == OpKind::SgdMomentumUpdate || (op.kind == OpKind::Other && op.other == OtherOp::ForeachPass);
  if (!charged || op.attr(Attr::foreach_bytes) <= 0) return std::nullopt;
  const KernelShape s =
      multi_tensor_charged_shape(compute_dtype(g, op), static_cast<double>(op.attr(Attr::foreach_bytes)),
                                 static_cast<double>(op.attr(Attr::launches)),
                                 static_cast<double>(op.attr(Attr::chunk_bytes)));
  if (find_class(spec.fitted_kernels, s) == nullptr) return std::nullopt;
  return s;
}

}  // namespace

std::optional<ConvSizes> conv_sizes_of_op(const Graph& g, const Op& op) {
  TensorId x = kNoTensor;  // the forward convolution's input, or a tensor of its shape
  if (op.kind == OpKind::Conv2d) x = op.inputs.empty() ? kNoTensor : op.inputs[0];
  else if (op.kind == OpKind::Conv2dBwdData) x = op.outputs.empty() ? kNoTensor : op.outputs[0];
  else if (op.kind == OpKind::Conv2dBwdFilter) x = op.inputs.size() < 2 ? kNoTensor : op.inputs[1];
  if (x == kNoTensor || g.tensor(x).shape.size() != 4) return std::nullopt;
  const std::vector<int64_t>& d = g.tensor(x).shape;
  // A 16-bit NCHW convolution reads and writes its activations through transposes to NHWC.
  const bool nhwc_shaped = fitted_is_16bit(compute_dtype(g, op)) && op.attr(Attr::channels_last) == 0;
  ConvSizes z;
  z.n = d[0];
  z.c = op.attr(Attr::in_channels);
  z.h = nhwc_shaped ? d[1] : d[2];
  z.w = nhwc_shaped ? d[2] : d[3];
  z.k = op.attr(Attr::out_channels);
  z.r = op.attr(Attr::kernel_h);
  z.s = op.attr(Attr::kernel_w);
  z.stride_h = op.attr(Attr::stride_h);
  z.stride_w = op.attr(Attr::stride_w);
  z.pad_h = op.attr(Attr::pad_h);
  z.pad_w = op.attr(Attr::pad_w);
  z.dilation = op.attr(Attr::dilation);
  z.groups = op.attr(Attr::groups);
  z.channels_last = nhwc_shaped || op.attr(Attr::channels_last) != 0;
  if (z.groups <= 0 || z.stride_h <= 0 || z.stride_w <= 0 || z.out_h() <= 0 || z.out_w() <= 0) return std::nullopt;
  return z;
}

KernelShape conv_kernel_shape(KernelFamily pass, const ConvSizes& z, MathPath path, uint32_t element_bytes) {
  KernelShape s;
  s.family = pass;
  s.path = path;
  const double n = static_cast<double>(z.n), c = static_cast<double>(z.c), k = static_cast<double>(z.k);
  const double g = static_cast<double>(z.groups), rs = static_cast<double>(z.r * z.s);
  const double hw = static_cast<double>(z.h * z.w), out_hw = static_cast<double>(z.out_h() * z.out_w());
  s.filter_1x1 = z.r == 1 && z.s == 1;
  s.variant = conv_variant(pass, z, path);
  s.flops = 2.0 * n * k * out_hw * (c / g) * rs;
  s.bytes = (n * c * hw + k * (c / g) * rs + n * k * out_hw) * element_bytes;
  // Each group an implicit GEMM: forward N*Ho*Wo x K/g reducing C/g*R*S; backward-data N*H*W x C/g reducing
  // K/g*R*S; backward-filter K/g x C/g*R*S reducing N*Ho*Wo.
  switch (pass) {
    case KernelFamily::ConvFwd: s.grid = {g, n * out_hw, k / g, c / g * rs}; break;
    case KernelFamily::ConvDgrad: s.grid = {g, n * hw, c / g, k / g * rs}; break;
    default: s.grid = {g, k / g, c / g * rs, n * out_hw}; break;
  }
  return s;
}

KernelShape gemm_kernel_shape(double batch, double m, double n, double k, MathPath path, uint32_t element_bytes) {
  KernelShape s;
  s.family = batch > 1 ? KernelFamily::Bmm : KernelFamily::Gemm;
  s.path = path;
  const double b = batch > 1 ? batch : 1;
  s.flops = 2.0 * b * m * n * k;
  s.bytes = b * (m * k + k * n + m * n) * element_bytes;
  s.grid = {b, m, n, k};
  return s;
}

MathPath sdpa_path(MathPath requested, DType dtype, bool has_tf32) {
  if (dtype != DType::F32) return requested;
  return has_tf32 ? MathPath::Tf32 : MathPath::CudaCore;
}

KernelShape sdpa_kernel_shape(bool backward, double b, double heads, double seq, double d, bool causal, MathPath path,
                              uint32_t element_bytes) {
  KernelShape s;
  s.family = backward ? KernelFamily::SdpaBwd : KernelFamily::SdpaFwd;
  s.path = path;
  // Forward: QK^T and PV, 2 * 2 * seq^2 * d per head, half of it under a causal mask; the backward 2.5 times that
  // (workloads/training_backward.cc).
  const double fwd = 4.0 * b * heads * seq * seq * d * (causal ? 0.5 : 1.0);
  s.flops = backward ? 2.5 * fwd : fwd;
  if (path == MathPath::Tf32 && element_bytes == 4) s.flops *= kFastF32Products;  // 3xTF32: sdpa_path
  // q, k, v, o (and backward: dO in, dQ, dK, dV out).
  s.bytes = (backward ? 8.0 : 4.0) * b * heads * seq * d * element_bytes;
  // One block per (batch, head, tile of queries), none split.
  s.grid = {b * heads, seq, 1, 0};
  return s;
}

std::optional<std::vector<KernelShape>> op_kernel_shapes(const GpuSpec& spec, const Graph& g, const Op& op) {
  switch (op.kind) {
    case OpKind::Conv2d:
    case OpKind::Conv2dBwdData:
    case OpKind::Conv2dBwdFilter: return conv_shapes_of_op(spec, g, op);
    case OpKind::Linear:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMul:
    case OpKind::MatMulBwd:
      return gemm_shapes_of_op(spec, g, op);
    case OpKind::FlashAttention:
    case OpKind::FlashAttentionBwd: {
      auto a = [&](Attr x) { return static_cast<double>(op.attr(x)); };
      const DType t = compute_dtype(g, op);
      const MathPath path = sdpa_path(math_path(spec, g, op), t, path_peak(spec, MathPath::Tf32) > 0);
      return std::vector<KernelShape>{sdpa_kernel_shape(op.kind == OpKind::FlashAttentionBwd, a(Attr::batch),
                                                        a(Attr::heads), a(Attr::seq), a(Attr::head_dim),
                                                        op.attr(Attr::causal) != 0, path, dtype_bytes(t))};
    }
    case OpKind::Concat: {  // PyTorch's cat: its launches over the inputs (hw/fitted/concat_kernels.h)
      std::vector<double> parts;
      for (TensorId t : op.inputs) parts.push_back(static_cast<double>(g.tensor(t).bytes));
      const int rank = op.outputs.empty() ? 0 : static_cast<int>(g.tensor(op.outputs[0]).shape.size());
      auto v = concat_kernel_shapes(parts, rank, compute_dtype(g, op), spec.sms);
      if (!v.empty()) return v;
      break;  // no bytes: priced as before, by the op's traffic
    }
    default: break;
  }
  if (op.kind == OpKind::Other && op.other == OtherOp::StandIn) return std::nullopt;
  if (auto pool = pool_shape_of_op(g, op)) return std::vector<KernelShape>{*pool};
  if (auto m = multi_tensor_shape_of_op(spec, g, op)) return std::vector<KernelShape>{*m};
  switch (op_class(op)) {
    case OpClass::Elementwise: return std::vector<KernelShape>{memory_shape_of_op(g, op, KernelFamily::Elementwise)};
    case OpClass::Reduction: return std::vector<KernelShape>{memory_shape_of_op(g, op, KernelFamily::Reduction)};
    case OpClass::Normalization: {
      const bool batch_norm = op.kind == OpKind::BatchNorm || op.kind == OpKind::BatchNormBwd;
      return std::vector<KernelShape>{
          memory_shape_of_op(g, op, batch_norm ? KernelFamily::BatchNorm : KernelFamily::LayerNorm)};
    }
    default: return std::nullopt;  // the optimizer's steps: no sweep measures them
  }
}

}  // namespace dlsim
