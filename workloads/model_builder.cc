// ModelBuilder: PyTorch's shape rules and the tensors each forward op creates.
//
// Conventions the training synthesis (training.cc) relies on, per op kind (inputs -> outputs):
//   Conv2d      [x, w, (b)] -> [y]                 attrs kernel/stride/pad/dilation/groups, macs
//   BatchNorm   [x, gamma, beta, running_mean, running_var] -> [y, save_mean, save_invstd, running_mean,
//               running_var]   (training mode updates the running statistics in place; they are Weight-kind
//               persistent buffers but not learnable, so they get no gradient and are not counted as params)
//   Relu        [x] -> [x] when in place (as torchvision's inplace=True), else [x] -> [y]
//   Relu6       [x, saved_input] -> [x] in place (see relu6()), else [x] -> [y]
//   MaxPool     [x] -> [y, indices(i64)]           Dropout [x] -> [y, mask(bool)]
//   Linear      [x, w, (b)] -> [y]                 MatMul [a, b] -> [y]
//   LayerNorm   [x, gamma, beta] -> [y, mean, rstd]   Embedding [ids, w] -> [y]
//   CrossEntropyLoss [logits, labels] -> [loss, log_probs]
//   Flatten/Reshape [x] -> [y]: views; training.cc elides them (the output shares x's storage, as in PyTorch)
//   Copy        [x] -> [y]: a dtype cast (autocast), attr cast=1
//
// Mixed precision (16-bit activations, fp32 weights) follows CUDA autocast: conv2d/linear/matmul run in the
// 16-bit type, casting fp32 inputs down (a weight is cast once and the copy reused, as autocast's cast cache
// does); softmax, layer_norm and cross_entropy run in fp32, casting 16-bit inputs up; the other ops keep their
// input's dtype (add/concat promote to the widest). Weights stay fp32 masters. A model held in bf16 (weights
// bf16 too) has no autocast: every op runs in bf16 and nothing is cast but the fp32 input images.
// TF32: an fp32 convolution carries attr tf32=0 when TF32 is off, an fp32 linear/matmul tf32=1 when it is allowed
// for matmuls too; PyTorch's default (cuDNN yes, cuBLAS no) adds no attribute, so that default graphs keep the
// op signatures a calibration measured.
#include "workloads/model_builder.h"

#include <algorithm>
#include <cmath>

#include "common/config_error.h"

namespace dlsim {
namespace {

DType wider(DType a, DType b) { return (a == DType::F32 || b == DType::F32) ? DType::F32 : a; }

}  // namespace

BuildOptions build_options(const TrainingOptions& t) {
  BuildOptions o;
  switch (t.precision) {
    case Precision::FP32: break;
    case Precision::MixedFP16: o.activations = DType::F16; break;
    case Precision::MixedBF16: o.activations = DType::BF16; break;
    case Precision::BF16: o.activations = o.weights = DType::BF16; break;
  }
  o.tf32 = t.tf32;
  o.fused = t.kernels == Kernels::Fused;
  return o;
}

ModelBuilder::ModelBuilder(std::string model_name, int64_t batch, DType act_dtype)
    : ModelBuilder(std::move(model_name), batch, BuildOptions{act_dtype, DType::F32, Tf32::Conv, false}) {}

ModelBuilder::ModelBuilder(std::string model_name, int64_t batch, const BuildOptions& options)
    : act_dtype_(options.activations), opts_(options) {
  g_.name = std::move(model_name);
  g_.batch = batch;
  if (batch <= 0) throw ConfigError(g_.name, 0, "batch", "batch size must be positive, got " + std::to_string(batch));
  auto floating = [](DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F16; };
  if (!floating(options.activations))
    throw ConfigError(g_.name, 0, "precision", std::string("activations must be f32, bf16 or f16, got ") + to_string(options.activations));
  if (options.weights != DType::F32 && options.weights != options.activations)
    throw ConfigError(g_.name, 0, "precision", "weights must be fp32 masters or of the activations' dtype");
}

void ModelBuilder::mark_tf32(Attrs& a, bool convolution) const {
  if (act_dtype_ != DType::F32) return;
  if (convolution && opts_.tf32 == Tf32::Off) a.set("tf32", 0);
  if (!convolution && opts_.tf32 == Tf32::All) a.set("tf32", 1);
}

std::string ModelBuilder::auto_name(const std::string& prefix, const std::string& given) {
  ++counter_;
  return given.empty() ? prefix + std::to_string(counter_) : given;
}

namespace {

[[noreturn]] void fail(const Graph& g, const std::string& layer, const std::string& msg) {
  throw ConfigError(g.name, 0, layer, msg);
}

TensorId new_tensor(Graph& g, const std::string& name, TensorKind kind, DType dt, std::vector<int64_t> shape,
                    bool persistent = false) {
  for (int64_t d : shape)
    if (d <= 0) fail(g, name, "tensor shape " + shape_str(shape) + " has a non-positive dimension");
  const std::optional<int64_t> n = checked_numel(shape);
  if (!n || static_cast<uint64_t>(*n) > kMaxTensorBytes / dtype_bytes(dt))
    fail(g, name, "tensor shape " + shape_str(shape) + " holds more than 2^50 bytes (1 PiB), dlsim's limit per "
                  "tensor: lower the batch, image_size or seq_len");
  Tensor t;
  t.name = name;
  t.kind = kind;
  t.dtype = dt;
  t.bytes = static_cast<uint64_t>(*n) * dtype_bytes(dt);
  t.shape = std::move(shape);
  t.persistent = persistent;
  return g.add_tensor(std::move(t));
}

// An op's multiply-accumulates; more than an int64 holds is an input error like an oversized tensor.
int64_t checked_macs(const Graph& g, const std::string& op, std::initializer_list<int64_t> factors) {
  const std::optional<int64_t> macs = checked_product(factors);
  if (!macs) fail(g, op, "more than 2^63 multiply-accumulates: lower the batch, image_size or seq_len");
  return *macs;
}

// Appends an op; bytes read and written are the sizes of its inputs and outputs.
OpId emit(Graph& g, const std::string& name, OpKind kind, std::vector<TensorId> in, std::vector<TensorId> out,
          double flops, Attrs attrs = {}) {
  Op o;
  o.name = name;
  o.kind = kind;
  o.phase = Phase::Forward;
  for (TensorId t : in) o.bytes_read += g.tensor(t).bytes;
  for (TensorId t : out) o.bytes_written += g.tensor(t).bytes;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.flops = flops;
  o.attrs = std::move(attrs);
  return g.add_op(std::move(o));
}

const std::vector<int64_t>& shape_of(const Graph& g, TensorId t, const std::string& layer) {
  if (t < 0 || static_cast<size_t>(t) >= g.tensors().size()) fail(g, layer, "input tensor id " + std::to_string(t) + " does not exist");
  return g.tensor(t).shape;
}

const std::vector<int64_t>& shape4(const Graph& g, TensorId t, const std::string& layer) {
  const auto& s = shape_of(g, t, layer);
  if (s.size() != 4) fail(g, layer, "expects an NCHW input, got shape " + shape_str(s));
  return s;
}

// The largest kernel, stride, padding or dilation a layer takes: 2^31, as ONNX Runtime's and cuDNN's int
// arguments bound them. Larger values would wrap `in + 2 * pad` (an ONNX file can hold any int64).
constexpr int64_t kMaxLayerSize = int64_t{1} << 31;

bool layer_sizes_ok(std::initializer_list<int64_t> positive, std::initializer_list<int64_t> non_negative) {
  for (int64_t v : positive)
    if (v <= 0 || v > kMaxLayerSize) return false;
  for (int64_t v : non_negative)
    if (v < 0 || v > kMaxLayerSize) return false;
  return true;
}

// PyTorch's pooling output size, including ceil_mode's rule that the last window must start inside the input
// or the left padding.
int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  int64_t num = in + 2 * p - k;
  int64_t out = (ceil_mode ? (num + s - 1) / s : num / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

std::vector<int64_t> broadcast(const Graph& g, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                               const std::string& layer) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> r(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) fail(g, layer, "shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    r[i] = std::max(da, db);
  }
  return r;
}

}  // namespace

TensorId ModelBuilder::input(const std::vector<int64_t>& shape, DType dtype, const std::string& name) {
  return new_tensor(g_, name, TensorKind::Input, dtype, shape);
}

TensorId ModelBuilder::parameter(const std::vector<int64_t>& shape, const std::string& name) {
  TensorId id = new_tensor(g_, name, TensorKind::Weight, opts_.weights, shape, true);
  g_.tensor(id).learnable = true;
  return id;
}

// Autocast: a tensor entering a bf16 op is cast to bf16 (weights through the cast cache); entering an fp32 op,
// a bf16 tensor is cast up.
TensorId ModelBuilder::cast_for(TensorId x, DType to, const std::string& layer) {
  const Tensor& t = g_.tensor(x);
  if (t.dtype == to || (t.dtype != DType::F32 && t.dtype != DType::BF16 && t.dtype != DType::F16)) return x;
  if (t.kind == TensorKind::Weight) {
    auto it = weight_casts_.find(x);
    if (it != weight_casts_.end()) return it->second;
  }
  std::string name = t.name + "." + to_string(to);
  std::vector<int64_t> shape = t.shape;
  bool is_weight = t.kind == TensorKind::Weight;
  TensorId y = new_tensor(g_, name, TensorKind::Activation, to, shape);
  Attrs a;
  a.set("cast", 1);
  emit(g_, layer + ".cast", OpKind::Copy, {x}, {y}, 0, a);
  if (is_weight) weight_casts_[x] = y;
  return y;
}


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
  Attrs a;
  a.set("kernel_h", kh); a.set("kernel_w", kw); a.set("stride_h", stride_h); a.set("stride_w", stride_w);
  a.set("pad_h", pad_h); a.set("pad_w", pad_w); a.set("dilation", dilation); a.set("groups", groups);
  a.set("bias", bias); a.set("in_channels", s[1]); a.set("out_channels", out_channels); a.set("macs", macs);
  mark_tf32(a, true);
  // FLOPs: 2 per multiply-accumulate; the bias add (one per output element) is left out as negligible.
  emit(g_, n, OpKind::Conv2d, in, {y}, 2.0 * static_cast<double>(macs), a);
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
  Attrs a;
  a.set("channels", c);
  // Statistics (2 flops/element) then normalise and scale (3 flops/element).
  emit(g_, n, OpKind::BatchNorm, {x, gamma, beta, rm, rv}, {y, mean, invstd, rm, rv}, 5.0 * static_cast<double>(numel(s)), a);
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
    if (last.kind == OpKind::BatchNorm && last.outputs[0] == x && !last.attrs.has("fused_relu")) {
      last.attrs.set("fused_relu", 1);
      last.flops += static_cast<double>(numel(s));
      return x;
    }
  }
  TensorId y = inplace ? x : new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  Attrs a;
  a.set("inplace", inplace);
  emit(g_, n, OpKind::Relu, {x}, {y}, static_cast<double>(numel(s)), a);
  return y;
}

// ReLU6 is hardtanh(0, 6), whose backward in PyTorch 1.13 needs the op's *input*. For the in-place form
// autograd therefore saves a clone of the input before overwriting it (measured: the clone is a storage of
// its own); the clone is an explicit Copy op here, and the Relu6 op lists it as a second, non-differentiable
// input so that the backward pass can read it: [x, saved_input] -> [x].
TensorId ModelBuilder::relu6(TensorId x, bool inplace, const std::string& name) {
  std::string n = auto_name("relu6", name);
  auto s = shape_of(g_, x, n);
  Attrs a;
  a.set("inplace", inplace);
  if (!inplace) {
    TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
    emit(g_, n, OpKind::Relu6, {x}, {y}, 2.0 * static_cast<double>(numel(s)), a);
    return y;
  }
  TensorId saved = new_tensor(g_, n + ".saved_input", TensorKind::Activation, g_.tensor(x).dtype, s);
  Attrs c;
  c.set("autograd_clone", 1);
  emit(g_, n + ".clone", OpKind::Copy, {x}, {saved}, 0, c);
  emit(g_, n, OpKind::Relu6, {x, saved}, {x}, 2.0 * static_cast<double>(numel(s)), a);
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
  Attrs a;
  a.set("kernel", k); a.set("stride", stride); a.set("pad", pad); a.set("ceil_mode", ceil_mode);
  emit(g_, n, OpKind::MaxPool, {x}, {y, idx}, static_cast<double>(numel(os) * k * k), a);
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
  Attrs a;
  a.set("kernel", k); a.set("stride", stride); a.set("pad", pad); a.set("ceil_mode", ceil_mode);
  a.set("count_include_pad", count_include_pad);
  emit(g_, n, OpKind::AvgPool, {x}, {y}, static_cast<double>(numel(os) * k * k), a);
  return y;
}

TensorId ModelBuilder::adaptive_avg_pool(TensorId x, int64_t out_h, int64_t out_w, const std::string& name) {
  std::string n = auto_name("avgpool", name);
  auto s = shape4(g_, x, n);
  if (out_h <= 0 || out_w <= 0) fail(g_, n, "adaptive pooling output must be positive");
  std::vector<int64_t> os = {s[0], s[1], out_h, out_w};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  Attrs a;
  a.set("out_h", out_h); a.set("out_w", out_w);
  // PyTorch computes a 1x1 adaptive average pool as mean() over H and W (a reduction kernel).
  OpKind kind = (out_h == 1 && out_w == 1) ? OpKind::GlobalAvgPool : OpKind::AdaptiveAvgPool;
  emit(g_, n, kind, {x}, {y}, static_cast<double>(numel(s)), a);
  return y;
}

TensorId ModelBuilder::flatten(TensorId x, const std::string& name) {
  std::string n = auto_name("flatten", name);
  auto s = shape_of(g_, x, n);
  if (s.empty()) fail(g_, n, "cannot flatten a scalar");
  std::vector<int64_t> os = {s[0], numel(s) / s[0]};
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  Attrs a;
  a.set("view", 1);
  emit(g_, n, OpKind::Flatten, {x}, {y}, 0, a);
  return y;
}

TensorId ModelBuilder::reshape(TensorId x, const std::vector<int64_t>& shape, const std::string& name) {
  std::string n = auto_name("reshape", name);
  auto s = shape_of(g_, x, n);
  std::vector<int64_t> os = shape;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < os.size(); ++i) {
    if (os[i] == -1) {
      if (infer >= 0) fail(g_, n, "reshape to " + shape_str(shape) + " has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (os[i] <= 0) {
      fail(g_, n, "reshape to " + shape_str(shape) + " has a non-positive dimension");
    } else {
      known *= os[i];
    }
  }
  if (infer >= 0) os[static_cast<size_t>(infer)] = numel(s) / known;
  if (numel(os) != numel(s)) fail(g_, n, "cannot reshape " + shape_str(s) + " to " + shape_str(shape));
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  Attrs a;
  a.set("view", 1);
  emit(g_, n, OpKind::Reshape, {x}, {y}, 0, a);
  return y;
}

// A transpose is materialised (a copy kernel), as PyTorch does when a permuted tensor is made contiguous
// for the next kernel; attrs perm0.. give the permutation.
TensorId ModelBuilder::transpose(TensorId x, const std::vector<int64_t>& perm, const std::string& name) {
  std::string n = auto_name("transpose", name);
  auto s = shape_of(g_, x, n);
  if (perm.size() != s.size()) fail(g_, n, "permutation of " + std::to_string(perm.size()) + " axes for shape " + shape_str(s));
  std::vector<bool> seen(s.size(), false);
  std::vector<int64_t> os(s.size());
  Attrs a;
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i] < 0 ? perm[i] + static_cast<int64_t>(s.size()) : perm[i];
    if (p < 0 || p >= static_cast<int64_t>(s.size()) || seen[static_cast<size_t>(p)]) fail(g_, n, "invalid permutation");
    seen[static_cast<size_t>(p)] = true;
    os[i] = s[static_cast<size_t>(p)];
    a.set("perm" + std::to_string(i), p);
  }
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  emit(g_, n, OpKind::Transpose, {x}, {y}, 0, a);
  return y;
}

// pads: ONNX order, all begins then all ends (x1_begin, x2_begin, ..., x1_end, x2_end); zero padding.
TensorId ModelBuilder::pad(TensorId x, const std::vector<int64_t>& pads, const std::string& name) {
  std::string n = auto_name("pad", name);
  auto s = shape_of(g_, x, n);
  if (pads.size() != 2 * s.size()) fail(g_, n, "pads needs 2 values per axis (" + std::to_string(2 * s.size()) + "), got " + std::to_string(pads.size()));
  for (int64_t p : pads)
    if (p < -kMaxLayerSize || p > kMaxLayerSize) fail(g_, n, "pads must be in [-2^31, 2^31], got " + std::to_string(p));
  std::vector<int64_t> os = s;
  Attrs a;
  for (size_t i = 0; i < s.size(); ++i) {
    os[i] += pads[i] + pads[i + s.size()];
    a.set("pad_begin" + std::to_string(i), pads[i]);
    a.set("pad_end" + std::to_string(i), pads[i + s.size()]);
  }
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, os);
  emit(g_, n, OpKind::Pad, {x}, {y}, 0, a);
  return y;
}

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
  Attrs a;
  a.set("in_features", in_f); a.set("out_features", out_f); a.set("rows", rows); a.set("bias", bias);
  a.set("macs", macs);
  mark_tf32(a, false);
  emit(g_, n, OpKind::Linear, in, {y}, 2.0 * static_cast<double>(macs), a);
  return y;
}

TensorId ModelBuilder::dropout(TensorId x, double p, const std::string& name) {
  std::string n = auto_name("dropout", name);
  auto s = shape_of(g_, x, n);
  if (!(p >= 0 && p < 1)) fail(g_, n, "dropout probability must be in [0, 1)");
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  // CUDA's fused dropout (native_dropout) keeps a bool mask; see training.cc for the CPU difference.
  TensorId mask = new_tensor(g_, n + ".mask", TensorKind::Activation, DType::Bool, s);
  Attrs a;
  a.set("p_ppm", static_cast<int64_t>(std::llround(p * 1e6)));
  emit(g_, n, OpKind::Dropout, {x}, {y, mask}, 2.0 * static_cast<double>(numel(s)), a);
  return y;
}

TensorId ModelBuilder::add(TensorId a, TensorId b, bool inplace, const std::string& name) {
  std::string n = auto_name("add", name);
  auto os = broadcast(g_, shape_of(g_, a, n), shape_of(g_, b, n), n);
  DType dt = wider(g_.tensor(a).dtype, g_.tensor(b).dtype);
  if (inplace && (os != g_.tensor(a).shape || dt != g_.tensor(a).dtype)) fail(g_, n, "in-place add cannot change its left operand's shape or dtype");
  TensorId y = inplace ? a : new_tensor(g_, n + ".out", TensorKind::Activation, dt, os);
  Attrs at;
  at.set("inplace", inplace);
  emit(g_, n, OpKind::Add, {a, b}, {y}, static_cast<double>(numel(os)), at);
  return y;
}

TensorId ModelBuilder::mul(TensorId a, TensorId b, const std::string& name) {
  std::string n = auto_name("mul", name);
  auto os = broadcast(g_, shape_of(g_, a, n), shape_of(g_, b, n), n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(g_.tensor(a).dtype, g_.tensor(b).dtype), os);
  emit(g_, n, OpKind::Mul, {a, b}, {y}, static_cast<double>(numel(os)));
  return y;
}

TensorId ModelBuilder::concat(const std::vector<TensorId>& xs, int64_t axis, const std::string& name) {
  std::string n = auto_name("cat", name);
  if (xs.empty()) fail(g_, n, "concat of no tensors");
  auto os = shape_of(g_, xs[0], n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(os.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(os.size())) fail(g_, n, "concat axis " + std::to_string(axis) + " out of range");
  DType dt = g_.tensor(xs[0]).dtype;
  for (size_t i = 1; i < xs.size(); ++i) {
    auto s = shape_of(g_, xs[i], n);
    if (s.size() != os.size()) fail(g_, n, "concat of tensors of different ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (static_cast<int64_t>(d) != ax && s[d] != os[d]) fail(g_, n, "concat shapes " + shape_str(os) + " and " + shape_str(s) + " differ off the axis");
    os[static_cast<size_t>(ax)] += s[static_cast<size_t>(ax)];
    dt = wider(dt, g_.tensor(xs[i]).dtype);
  }
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, dt, os);
  Attrs a;
  a.set("axis", ax);
  emit(g_, n, OpKind::Concat, xs, {y}, 0, a);
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
  Attrs at;
  at.set("batch", nb); at.set("m", m); at.set("k", k); at.set("n", nn); at.set("macs", macs);
  if (transpose_b) at.set("transpose_b", 1);
  mark_tf32(at, false);
  emit(g_, n, OpKind::MatMul, {ca, cb}, {y}, 2.0 * static_cast<double>(macs), at);
  return y;
}

TensorId ModelBuilder::softmax(TensorId x, int64_t axis, const std::string& name) {
  std::string n = auto_name("softmax", name);
  auto s = shape_of(g_, x, n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(s.size())) fail(g_, n, "softmax axis " + std::to_string(axis) + " out of range");
  TensorId cx = cast_for(x, fp32_op_dtype(), n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(cx).dtype, s);
  Attrs a;
  a.set("axis", ax);
  emit(g_, n, OpKind::Softmax, {cx}, {y}, 5.0 * static_cast<double>(numel(s)), a);
  return y;
}

TensorId ModelBuilder::softmax_fp32(TensorId x, int64_t axis, const std::string& name) {
  std::string n = auto_name("softmax", name);
  auto s = shape_of(g_, x, n);
  int64_t ax = axis < 0 ? axis + static_cast<int64_t>(s.size()) : axis;
  if (ax < 0 || ax >= static_cast<int64_t>(s.size())) fail(g_, n, "softmax axis " + std::to_string(axis) + " out of range");
  TensorId cx = cast(x, DType::F32, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, DType::F32, s);
  Attrs a;
  a.set("axis", ax);
  emit(g_, n, OpKind::Softmax, {cx}, {y}, 5.0 * static_cast<double>(numel(s)), a);
  return y;
}

TensorId ModelBuilder::cast(TensorId x, DType to, const std::string& name) {
  const Tensor& t = g_.tensor(x);
  if (t.dtype == to) return x;
  const std::string tname = t.name + "." + to_string(to);
  std::vector<int64_t> shape = t.shape;
  TensorId y = new_tensor(g_, tname, TensorKind::Activation, to, shape);
  Attrs a;
  a.set("cast", 1);
  emit(g_, name + ".cast", OpKind::Copy, {x}, {y}, 0, a);
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
  Attrs a;
  a.set("normalized", s.back());
  emit(g_, n, OpKind::LayerNorm, {cx, gamma, beta}, {y, mean, rstd}, 5.0 * static_cast<double>(numel(s)), a);
  return y;
}

TensorId ModelBuilder::gelu(TensorId x, const std::string& name) {
  std::string n = auto_name("gelu", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n, OpKind::Gelu, {x}, {y}, 8.0 * static_cast<double>(numel(s)));
  return y;
}

TensorId ModelBuilder::linear_gelu(TensorId x, int64_t out_features, const std::string& linear_name,
                                   const std::string& gelu_name) {
  if (!opts_.fused) return gelu(linear(x, out_features, true, linear_name), gelu_name);
  TensorId h = linear(x, out_features, false, linear_name);
  std::string n = auto_name("gelu", gelu_name);
  auto s = shape_of(g_, h, n);
  TensorId bias = cast_for(parameter({out_features}, linear_name + ".bias"), act_dtype_, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(h).dtype, s);
  Attrs a;
  a.set("fused_bias", 1);
  // 8 per element, as the eager Gelu: the bias add is not counted in either form (Linear counts its MACs only).
  emit(g_, n, OpKind::Gelu, {h, bias}, {y}, 8.0 * static_cast<double>(numel(s)), a);
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
  Attrs a;
  a.set("axis", static_cast<int64_t>(s.size()) - 1);
  a.set("fused_mask_dropout", 1);
  a.set("p_ppm", static_cast<int64_t>(std::llround(p * 1e6)));
  // scale, mask, softmax (5) and dropout (2) per element.
  emit(g_, n, OpKind::Softmax, {x, mask, scale}, {y, keep, probs}, 9.0 * static_cast<double>(numel(s)), a);
  return y;
}

// LlamaRMSNorm in eager PyTorch is x.to(float32), pow(2), mean, add eps, rsqrt, mul, .to(input dtype) and the
// weight's mul: seven kernels, one op here. What autograd keeps (measured, validate/torch/torch_reference_llama.py): the
// fp32 x (x itself when fp32, else the cast copy) and x^2 (PowBackward0 and 1.13's MeanBackward1), the
// (rows, 1) rsqrt (RsqrtBackward0 keeps its result), and the normalised x in the input's dtype (the weight's
// MulBackward0). Bytes moved are those kernels' reads and writes, less the one-element-per-row ones.
TensorId ModelBuilder::rms_norm(TensorId x, const std::string& name) {
  std::string n = auto_name("rmsnorm", name);
  auto s = shape_of(g_, x, n);
  if (s.empty()) fail(g_, n, "RMS norm of a scalar");
  const DType in_dt = g_.tensor(x).dtype;
  TensorId w = parameter({s.back()}, n + ".weight");
  std::vector<TensorId> outs;
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(in_dt, opts_.weights), s);
  outs.push_back(y);
  TensorId x32 = x;
  if (in_dt != DType::F32) outs.push_back(x32 = new_tensor(g_, n + ".x_fp32", TensorKind::Activation, DType::F32, s));
  TensorId sq = new_tensor(g_, n + ".x_squared", TensorKind::Activation, DType::F32, s);
  std::vector<int64_t> rs(s.begin(), s.end() - 1);
  rs.push_back(1);
  TensorId rstd = new_tensor(g_, n + ".rstd", TensorKind::Activation, DType::F32, rs);
  TensorId normed = new_tensor(g_, n + ".normalized", TensorKind::Activation, in_dt, s);
  outs.push_back(sq);
  outs.push_back(rstd);
  outs.push_back(normed);
  Attrs a;
  a.set("normalized", s.back());
  a.set("has_x_fp32", in_dt != DType::F32);
  const double elems = static_cast<double>(numel(s));
  OpId id = emit(g_, n, OpKind::RmsNorm, {x, w}, outs, 5.0 * elems, a);
  // The eager kernels read x (fp32) twice (pow, mul), x^2 once (mean) and the normalised x once (weight mul),
  // beside the cast's read of x when x is 16-bit; emit counted x and the weight once.
  const uint64_t x32_bytes = g_.tensor(x32).bytes;
  g_.op(id).bytes_read += x32_bytes * (in_dt != DType::F32 ? 2 : 1) + g_.tensor(sq).bytes + g_.tensor(normed).bytes;
  return y;
}

std::pair<TensorId, TensorId> ModelBuilder::rotary_embedding(TensorId position_ids, int64_t head_dim,
                                                             const std::string& name) {
  std::string n = auto_name("rotary_emb", name);
  auto s = shape_of(g_, position_ids, n);
  if (s.size() != 2) fail(g_, n, "position ids must be (1, S), got " + shape_str(s));
  if (head_dim <= 0 || head_dim % 2 != 0) fail(g_, n, "rotary head size must be even, got " + std::to_string(head_dim));
  std::vector<int64_t> cs = {s[0], s[1], head_dim};
  TensorId cos = new_tensor(g_, n + ".cos", TensorKind::Activation, opts_.weights, cs);
  TensorId sin = new_tensor(g_, n + ".sin", TensorKind::Activation, opts_.weights, cs);
  Attrs a;
  a.set("rotary_embedding", 1);
  a.set("head_dim", head_dim);
  // inv_freq x positions (a tiny matmul), cat, cos and sin: a few flops per element.
  emit(g_, n, OpKind::Other, {position_ids}, {cos, sin}, 4.0 * static_cast<double>(numel(cs)), a);
  return {cos, sin};
}

// apply_rotary_pos_emb: q * cos + cat(-q2, q1) * sin (two slices, a neg, a cat, two muls and an add: six
// kernels, one op here). Its MulBackward0s keep cos and sin (the input needs no save); the output dtype is
// q's promoted with cos's (fp32 under autocast, where cos follows the fp32 hidden states).
TensorId ModelBuilder::rotary(TensorId x, TensorId cos, TensorId sin, const std::string& name) {
  std::string n = auto_name("rotary", name);
  auto s = shape_of(g_, x, n);
  auto cs = shape_of(g_, cos, n);
  if (s.size() != 4) fail(g_, n, "rotary expects (B, S, heads, d), got " + shape_str(s));
  if (cs.size() != 3 || cs[1] != s[1] || cs[2] != s[3] || shape_of(g_, sin, n) != cs)
    fail(g_, n, "rotary cos/sin " + shape_str(cs) + " do not match the input " + shape_str(s));
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, wider(g_.tensor(x).dtype, g_.tensor(cos).dtype),
                          {s[0], s[2], s[1], s[3]});
  const double elems = static_cast<double>(numel(s));
  OpId id = emit(g_, n, OpKind::Rotary, {x, cos, sin}, {y}, 4.0 * elems);
  // The six kernels: mul (reads x, writes y), neg (half of x), cat (x), mul by sin (x), add (2 y): about three
  // more reads and two more writes of x's size beside what emit counted.
  Op& o = g_.op(id);
  o.bytes_read += 3 * g_.tensor(y).bytes;
  o.bytes_written += 2 * g_.tensor(y).bytes;
  return y;
}

TensorId ModelBuilder::repeat_kv(TensorId x, int64_t n_rep, bool seq_major, const std::string& name) {
  std::string n = auto_name("repeat_kv", name);
  auto s = shape_of(g_, x, n);
  if (s.size() != 4 || n_rep <= 0) fail(g_, n, "repeat_kv expects a 4-D input and a positive repeat, got " + shape_str(s));
  const int64_t kv = seq_major ? s[2] : s[1], seq = seq_major ? s[1] : s[2];
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, {s[0], kv * n_rep, seq, s[3]});
  Attrs a;
  a.set("n_rep", n_rep);
  a.set("seq_major", seq_major);
  emit(g_, n, OpKind::RepeatKv, {x}, {y}, 0, a);
  return y;
}

TensorId ModelBuilder::silu(TensorId x, const std::string& name) {
  std::string n = auto_name("silu", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  emit(g_, n, OpKind::Silu, {x}, {y}, 5.0 * static_cast<double>(numel(s)));
  return y;
}

// FLOPs (Dao et al., FlashAttention, 2022): Q K^T and P V are 2 x 2 B H S^2 d; causal masking skips the upper
// triangle's blocks, half of it. The backward (training.cc) recomputes P and does four products: 2.5x the forward.
TensorId ModelBuilder::flash_attention(TensorId q, TensorId k, TensorId v, bool causal, const std::string& name) {
  std::string n = auto_name("sdpa", name);
  auto sq = shape_of(g_, q, n), sk = shape_of(g_, k, n), sv = shape_of(g_, v, n);
  if (sq.size() != 4 || sk != sq || sv != sq)
    fail(g_, n, "flash attention needs q, k, v of one (B, heads, S, d) shape, got " + shape_str(sq) + ", " +
                    shape_str(sk) + ", " + shape_str(sv));
  // Under autocast scaled_dot_product_attention runs in the 16-bit type (it is on autocast's lower-precision list).
  const DType dt = autocast() ? act_dtype_ : g_.tensor(q).dtype;
  TensorId cq = cast(q, dt, n), ck = cast(k, dt, n), cv = cast(v, dt, n);
  TensorId o = new_tensor(g_, n + ".out", TensorKind::Activation, dt, {sq[0], sq[2], sq[1], sq[3]});
  TensorId lse = new_tensor(g_, n + ".logsumexp", TensorKind::Activation, DType::F32, {sq[0], sq[1], sq[2]});
  const int64_t macs = checked_macs(g_, n, {2, sq[0], sq[1], sq[2], sq[2], sq[3]});
  const double flops = 2.0 * static_cast<double>(macs) * (causal ? 0.5 : 1.0);
  Attrs a;
  a.set("batch", sq[0]); a.set("heads", sq[1]); a.set("seq", sq[2]); a.set("head_dim", sq[3]);
  a.set("causal", causal);
  a.set("macs", static_cast<int64_t>(flops / 2));  // those performed: the causal kernel skips the masked half
  emit(g_, n, OpKind::FlashAttention, {cq, ck, cv}, {o, lse}, flops, a);
  return o;
}

// select and tanh have no OpKind of their own (model_builder.h says why); attrs say which op it is.
TensorId ModelBuilder::select(TensorId x, int64_t axis, int64_t index, const std::string& name) {
  std::string n = auto_name("select", name);
  std::vector<int64_t> s = shape_of(g_, x, n);
  int64_t rank = static_cast<int64_t>(s.size());
  int64_t ax = axis < 0 ? axis + rank : axis;
  if (rank < 2 || ax < 0 || ax >= rank)
    fail(g_, n, "select axis " + std::to_string(axis) + " is out of range for shape " + shape_str(s));
  int64_t len = s[static_cast<size_t>(ax)];
  if (index < -len || index >= len)
    fail(g_, n, "select index " + std::to_string(index) + " is out of range for shape " + shape_str(s));
  s.erase(s.begin() + ax);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  Attrs a;
  a.set("select", 1);
  a.set("axis", ax);
  a.set("index", index < 0 ? index + len : index);
  emit(g_, n, OpKind::Other, {x}, {y}, 0, a);
  return y;
}

TensorId ModelBuilder::tanh(TensorId x, const std::string& name) {
  std::string n = auto_name("tanh", name);
  auto s = shape_of(g_, x, n);
  TensorId y = new_tensor(g_, n + ".out", TensorKind::Activation, g_.tensor(x).dtype, s);
  Attrs a;
  a.set("tanh", 1);
  emit(g_, n, OpKind::Other, {x}, {y}, static_cast<double>(numel(s)), a);
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
  Attrs a;
  a.set("vocab", vocab); a.set("dim", dim);
  emit(g_, n, OpKind::Embedding, {ids, w}, {y}, 0, a);
  return y;
}

// log_softmax + nll_loss (mean reduction) over the last axis; the labels are an int64 input of the batch.
TensorId ModelBuilder::cross_entropy_loss(TensorId logits, const std::string& name) {
  std::string n = auto_name("loss", name);
  auto s = shape_of(g_, logits, n);
  if (s.size() < 2) fail(g_, n, "cross entropy needs (rows, classes) logits, got " + shape_str(s));
  int64_t classes = s.back(), rows = numel(s) / classes;
  TensorId labels = input({rows}, DType::I64, n + ".labels");
  // Autocast runs the loss in fp32; without it the loss keeps its input's dtype (a bf16 model's logits.float()
  // stays fp32).
  TensorId cx = cast_for(logits, autocast() ? DType::F32 : g_.tensor(logits).dtype, n);
  const DType dt = g_.tensor(cx).dtype;
  TensorId loss = new_tensor(g_, n + ".out", TensorKind::Activation, dt, {1});
  TensorId logp = new_tensor(g_, n + ".log_probs", TensorKind::Activation, dt, {rows, classes});
  Attrs a;
  a.set("classes", classes); a.set("rows", rows);
  emit(g_, n, OpKind::CrossEntropyLoss, {cx, labels}, {loss, logp}, 5.0 * static_cast<double>(rows * classes), a);
  return loss;
}

void ModelBuilder::begin_block(const std::string& name) {
  if (in_block_) fail(g_, name, "blocks do not nest: block '" + g_.blocks.back() + "' is still open");
  g_.blocks.push_back(name);
  block_first_op_ = g_.ops().size();
  in_block_ = true;
}

void ModelBuilder::end_block() {
  if (!in_block_) fail(g_, "block", "end_block without begin_block");
  const auto index = static_cast<int32_t>(g_.blocks.size() - 1);
  for (size_t i = block_first_op_; i < g_.ops().size(); ++i) g_.op(static_cast<OpId>(i)).block = index;
  in_block_ = false;
}

Graph ModelBuilder::finish() {
  if (in_block_) fail(g_, g_.blocks.back(), "block left open at finish");
  Graph out = std::move(g_);
  g_ = Graph();
  g_.name = out.name;
  g_.batch = out.batch;
  weight_casts_.clear();
  return out;
}

}  // namespace dlsim
