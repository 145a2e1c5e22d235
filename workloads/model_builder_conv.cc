// ModelBuilder's image layers: convolution, batch norm, ReLU and ReLU6, and pooling (torchvision's CNNs).
#include "workloads/model_builder.h"

#include <cmath>

#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

TensorId ModelBuilder::conv2d(TensorId x, int64_t out_channels, int64_t kh, int64_t kw, int64_t stride_h,
                              int64_t stride_w, int64_t pad_h, int64_t pad_w, int64_t groups, bool bias,
                              const std::string& name, int64_t dilation) {
  std::string n = auto_name("conv", name);
  auto s = shape4(g_, x, n);
  if (!layer_sizes_ok({out_channels, kh, kw, stride_h, stride_w, groups, dilation}, {pad_h, pad_w}))
    fail(g_, n, "convolution sizes must be in [1, 2^31] (padding in [0, 2^31])");
  if (s[1] % groups != 0 || out_channels % groups != 0)
    fail(g_, n, "channels " + std::to_string(s[1]) + "->" + std::to_string(out_channels) + " not divisible by groups " + std::to_string(groups));
  int64_t span_h = s[2] + 2 * pad_h - dilation * (kh - 1) - 1, span_w = s[3] + 2 * pad_w - dilation * (kw - 1) - 1;
  if (span_h < 0 || span_w < 0) fail(g_, n, "kernel larger than the padded input " + shape_str(s));
  int64_t ho = span_h / stride_h + 1, wo = span_w / stride_w + 1;
  TensorId w = parameter({out_channels, s[1] / groups, kh, kw}, n + ".weight");
  std::vector<TensorId> in = {cast_for(x, act_dtype_, n), cast_for(w, act_dtype_, n)};
  if (bias) in.push_back(cast_for(parameter({out_channels}, n + ".bias"), act_dtype_, n));
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, act_dtype_, {s[0], out_channels, ho, wo});
  const int64_t macs = checked_macs(g_, n, {s[0], out_channels, ho, wo, s[1] / groups, kh, kw});
  // FLOPs: 2 per multiply-accumulate; the bias add (one per output element) is left out as negligible.
  const OpId id = emit(g_, n, OpKind::Conv2d, in, {y}, 2.0 * static_cast<double>(macs),
                       {{Attr::kernel_h, kh}, {Attr::kernel_w, kw}, {Attr::stride_h, stride_h}, {Attr::stride_w, stride_w},
                        {Attr::pad_h, pad_h}, {Attr::pad_w, pad_w}, {Attr::dilation, dilation}, {Attr::groups, groups},
                        {Attr::bias, bias}, {Attr::in_channels, s[1]}, {Attr::out_channels, out_channels},
                        {Attr::macs, macs}});
  mark_tf32(g_.op(id), true);
  return y;
}

TensorId ModelBuilder::batch_norm(TensorId x, const std::string& name) {
  std::string n = auto_name("bn", name);
  auto s = shape_of(g_, x, n);
  if (s.size() < 2) fail(g_, n, "batch norm needs (N, C, ...), got " + shape_str(s));
  int64_t c = s[1];
  TensorId gamma = parameter({c}, n + ".weight"), beta = parameter({c}, n + ".bias");
  TensorId rm = parameter({c}, n + ".running_mean"), rv = parameter({c}, n + ".running_var");
  g_.tensor(rm).learnable = g_.tensor(rv).learnable = false;  // buffers, not parameters
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  TensorId mean = new_tensor(g_, n + ".save_mean", TensorKind::Activation, DType::F32, {c});
  TensorId invstd = new_tensor(g_, n + ".save_invstd", TensorKind::Activation, DType::F32, {c});
  // Statistics (2 flops/element) then normalise and scale (3 flops/element).
  emit(g_, n, OpKind::BatchNorm, {x, gamma, beta, rm, rv}, {y, mean, invstd, rm, rv}, 5.0 * static_cast<double>(numel(s)),
       {{Attr::channels, c}});
  return y;
}

TensorId ModelBuilder::relu(TensorId x, bool inplace, const std::string& name) {
  std::string n = auto_name("relu", name);
  auto s = shape_of(g_, x, n);
  // Fused: cuDNN's batch norm with its activation (CUDNN_BATCHNORM_OPS_BN_ACTIVATION, what MXNet's fuse-bn-relu
  // and XLA do) when x is the output of the op just built, a batch norm. The batch norm writes relu(y) and its
  // backward masks the gradient with that output: one kernel each way instead of two.
  if (opts_.fused && !g_.ops().empty()) {
    Op& last = g_.op(static_cast<OpId>(g_.ops().size() - 1));
    if (last.kind == OpKind::BatchNorm && last.outputs[0] == x && !last.has_attr(Attr::fused_relu)) {
      last.set_attr(Attr::fused_relu, 1);
      last.flops += static_cast<double>(numel(s));
      return x;
    }
  }
  TensorId y = inplace ? x : new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n, OpKind::Relu, {x}, {y}, static_cast<double>(numel(s)), {{Attr::inplace, inplace}});
  return y;
}

// ReLU6 is hardtanh(0, 6), whose backward in PyTorch 1.13 needs the op's *input*. For the in-place form
// autograd therefore saves a clone of the input before overwriting it (measured: the clone is a storage of
// its own); the clone is an explicit Copy op here, and the Relu6 op lists it as a second, non-differentiable
// input so that the backward pass can read it: [x, saved_input] -> [x].
TensorId ModelBuilder::relu6(TensorId x, bool inplace, const std::string& name) {
  std::string n = auto_name("relu6", name);
  auto s = shape_of(g_, x, n);
  if (!inplace) {
    TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
    emit(g_, n, OpKind::Relu6, {x}, {y}, 2.0 * static_cast<double>(numel(s)), {{Attr::inplace, 0}});
    return y;
  }
  TensorId saved = new_tensor(g_, n + ".saved_input", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n + ".clone", OpKind::Copy, {x}, {saved}, 0, {{Attr::autograd_clone, 1}});
  emit(g_, n, OpKind::Relu6, {x, saved}, {x}, 2.0 * static_cast<double>(numel(s)), {{Attr::inplace, 1}});
  return x;
}

TensorId ModelBuilder::max_pool(TensorId x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode,
                                const std::string& name) {
  std::string n = auto_name("maxpool", name);
  auto s = shape4(g_, x, n);
  if (!layer_sizes_ok({k, stride}, {pad}) || 2 * pad > k)
    fail(g_, n, "bad pooling window (sizes in [1, 2^31], padding at most half the kernel)");
  if (s[2] + 2 * pad < k || s[3] + 2 * pad < k) fail(g_, n, "pooling window larger than the padded input " + shape_str(s));
  int64_t ho = pool_out(s[2], k, stride, pad, ceil_mode), wo = pool_out(s[3], k, stride, pad, ceil_mode);
  std::vector<int64_t> os = {s[0], s[1], ho, wo};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  // PyTorch's max_pool2d_with_indices keeps int64 argmax indices for the backward pass.
  TensorId idx = new_tensor(g_, n + ".indices", TensorKind::Activation, DType::I64, os);
  emit(g_, n, OpKind::MaxPool, {x}, {y, idx}, static_cast<double>(numel(os) * k * k),
       {{Attr::kernel, k}, {Attr::stride, stride}, {Attr::pad, pad}, {Attr::ceil_mode, ceil_mode}});
  return y;
}

TensorId ModelBuilder::avg_pool(TensorId x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode,
                                bool count_include_pad, const std::string& name) {
  std::string n = auto_name("avgpool", name);
  auto s = shape4(g_, x, n);
  if (!layer_sizes_ok({k, stride}, {pad}) || 2 * pad > k)
    fail(g_, n, "bad pooling window (sizes in [1, 2^31], padding at most half the kernel)");
  if (s[2] + 2 * pad < k || s[3] + 2 * pad < k) fail(g_, n, "pooling window larger than the padded input " + shape_str(s));
  int64_t ho = pool_out(s[2], k, stride, pad, ceil_mode), wo = pool_out(s[3], k, stride, pad, ceil_mode);
  std::vector<int64_t> os = {s[0], s[1], ho, wo};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  emit(g_, n, OpKind::AvgPool, {x}, {y}, static_cast<double>(numel(os) * k * k),
       {{Attr::kernel, k}, {Attr::stride, stride}, {Attr::pad, pad}, {Attr::ceil_mode, ceil_mode},
        {Attr::count_include_pad, count_include_pad}});
  return y;
}

TensorId ModelBuilder::adaptive_avg_pool(TensorId x, int64_t out_h, int64_t out_w, const std::string& name) {
  std::string n = auto_name("avgpool", name);
  auto s = shape4(g_, x, n);
  if (out_h <= 0 || out_w <= 0) fail(g_, n, "adaptive pooling output must be positive");
  std::vector<int64_t> os = {s[0], s[1], out_h, out_w};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  // PyTorch computes a 1x1 adaptive average pool as mean() over H and W (a reduction kernel).
  OpKind kind = (out_h == 1 && out_w == 1) ? OpKind::GlobalAvgPool : OpKind::AdaptiveAvgPool;
  emit(g_, n, kind, {x}, {y}, static_cast<double>(numel(s)), {{Attr::out_h, out_h}, {Attr::out_w, out_w}});
  return y;
}

}  // namespace dlsim
