#include "validate/cuda_plan.h"

#include <sstream>

#include "common/config_error.h"

namespace dlsim {

const char* to_string(KernelLib l) {
  switch (l) {
    case KernelLib::Cudnn: return "cudnn";
    case KernelLib::Cublas: return "cublas";
    case KernelLib::Ours: return "ours";
  }
  return "?";
}

const char* to_string(KernelCall c) {
  switch (c) {
    case KernelCall::ConvForward: return "cudnnConvolutionForward";
    case KernelCall::ConvBackwardData: return "cudnnConvolutionBackwardData";
    case KernelCall::ConvBackwardFilter: return "cudnnConvolutionBackwardFilter";
    case KernelCall::ConvBackwardBias: return "cudnnConvolutionBackwardBias";
    case KernelCall::AddTensor: return "cudnnAddTensor";
    case KernelCall::BatchNormForwardTraining: return "cudnnBatchNormalizationForwardTraining";
    case KernelCall::BatchNormBackward: return "cudnnBatchNormalizationBackward";
    case KernelCall::ActivationForward: return "cudnnActivationForward";
    case KernelCall::ActivationBackward: return "cudnnActivationBackward";
    case KernelCall::PoolingForward: return "cudnnPoolingForward";
    case KernelCall::PoolingBackward: return "cudnnPoolingBackward";
    case KernelCall::SoftmaxForward: return "cudnnSoftmaxForward";
    case KernelCall::SoftmaxBackward: return "cudnnSoftmaxBackward";
    case KernelCall::Gemm: return "cublasGemmEx";
    case KernelCall::GemmStridedBatched: return "cublasGemmStridedBatchedEx";
    case KernelCall::ElementwiseBinary: return "elementwise_binary";
    case KernelCall::ElementwiseUnary: return "elementwise_unary";
    case KernelCall::ElementwiseUnaryBackward: return "elementwise_unary_backward";
    case KernelCall::BiasAdd: return "bias_add";
    case KernelCall::BiasGrad: return "bias_grad";
    case KernelCall::Copy: return "cudaMemcpy2DAsync";
    case KernelCall::Fill: return "fill";
    case KernelCall::LayerNormForward: return "layer_norm_forward";
    case KernelCall::LayerNormBackward: return "layer_norm_backward";
    case KernelCall::EmbeddingForward: return "embedding_forward";
    case KernelCall::EmbeddingBackward: return "embedding_backward";
    case KernelCall::CrossEntropyForward: return "cross_entropy_forward";
    case KernelCall::CrossEntropyBackward: return "cross_entropy_backward";
    case KernelCall::SgdMomentum: return "sgd_momentum_update";
    case KernelCall::Adam: return "adam_update";
    case KernelCall::MemoryBound: return "memory_bound";
  }
  return "?";
}

namespace {

// Everything that can go wrong while mapping one op names the op (and the graph) in a ConfigError.
[[noreturn]] void fail(const Graph& g, const Op& op, const std::string& msg) {
  throw ConfigError("graph " + g.name, 0, op.name,
                    "cannot map op " + std::to_string(op.id) + " (" + to_string(op.kind) + ") to CUDA: " + msg);
}

int64_t numel(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  if (t.shape.empty()) n = static_cast<int64_t>(t.bytes / dtype_bytes(t.dtype));
  return n;
}

Arg arg(const Graph& g, TensorId id) { return Arg{id, g.tensor(id).bytes}; }
Arg side(uint64_t bytes) { return Arg{kNoTensor, bytes}; }

bool contains(const std::vector<TensorId>& v, TensorId id) {
  for (TensorId x : v)
    if (x == id) return true;
  return false;
}

// The first of `ids`, other than `exclude`, whose shape is `shape`; kNoTensor when none.
TensorId find_shaped(const Graph& g, const std::vector<TensorId>& ids, const std::vector<int64_t>& shape,
                     const std::vector<TensorId>& exclude = {}) {
  for (TensorId id : ids)
    if (!contains(exclude, id) && g.tensor(id).shape == shape) return id;
  return kNoTensor;
}

TensorId first_of_kind(const Graph& g, const std::vector<TensorId>& ids, TensorKind kind, size_t rank = 0,
                       int skip = 0) {
  for (TensorId id : ids) {
    const Tensor& t = g.tensor(id);
    if (t.kind == kind && (rank == 0 || t.shape.size() == rank) && skip-- == 0) return id;
  }
  return kNoTensor;
}

const Op& forward_of(const Graph& g, const Op& op) {
  if (op.forward_op < 0 || static_cast<size_t>(op.forward_op) >= g.ops().size())
    fail(g, op, "a backward op without its forward op (forward_op = " + std::to_string(op.forward_op) + ")");
  return g.op(op.forward_op);
}

TensorId need_in(const Graph& g, const Op& op, size_t i) {
  if (op.inputs.size() <= i) fail(g, op, "expected at least " + std::to_string(i + 1) + " inputs");
  return op.inputs[i];
}
TensorId need_out(const Graph& g, const Op& op, size_t i) {
  if (op.outputs.size() <= i) fail(g, op, "expected at least " + std::to_string(i + 1) + " outputs");
  return op.outputs[i];
}
TensorId require(const Graph& g, const Op& op, TensorId id, const std::string& role) {
  if (id == kNoTensor) fail(g, op, "cannot find its " + role + " tensor");
  return id;
}

// An attribute under the first of its spellings that is present; a missing one is an error, not a default.
int64_t attr(const Graph& g, const Op& op, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (op.attrs.has(n)) return op.attrs.get(n);
  fail(g, op, std::string("missing attribute '") + *names.begin() + "'");
}
int64_t attr_or(const Op& op, std::initializer_list<const char*> names, int64_t fallback) {
  for (const char* n : names)
    if (op.attrs.has(n)) return op.attrs.get(n);
  return fallback;
}

// The 4-d cuDNN view of a tensor: NCHW as is, (N, C) as (N, C, 1, 1), (N, C, L) as (N, C, L, 1), other as a row.
std::vector<int64_t> dims4(const Tensor& t) {
  const auto& s = t.shape;
  if (s.size() == 4) return s;
  if (s.size() == 2) return {s[0], s[1], 1, 1};
  if (s.size() == 3) return {s[0], s[1], s[2], 1};
  return {1, numel(t), 1, 1};
}

DType same_dtype(const Graph& g, const Op& op, std::initializer_list<TensorId> ids) {
  DType d = g.tensor(*ids.begin()).dtype;
  for (TensorId id : ids)
    if (id != kNoTensor && g.tensor(id).dtype != d)
      fail(g, op, std::string("mixed data types in one library call (") + to_string(d) + " and " +
                      to_string(g.tensor(id).dtype) + " of '" + g.tensor(id).name + "')");
  return d;
}

// Convolution shape from the forward op: kernel from the weight, groups from channels, stride and padding from
// the attributes, checked against the output's shape so that a misread attribute cannot pass silently.
ConvShape conv_shape(const Graph& g, const Op& fwd) {
  const Tensor& x = g.tensor(need_in(g, fwd, 0));
  const Tensor& y = g.tensor(need_out(g, fwd, 0));
  const TensorId wid = require(g, fwd, first_of_kind(g, fwd.inputs, TensorKind::Weight, 4), "4-d weight");
  const Tensor& w = g.tensor(wid);
  if (x.shape.size() != 4 || y.shape.size() != 4) fail(g, fwd, "convolution input and output must be NCHW");
  ConvShape c;
  c.n = x.shape[0], c.c = x.shape[1], c.h = x.shape[2], c.w = x.shape[3];
  c.k = w.shape[0], c.r = w.shape[2], c.s = w.shape[3];
  c.p = y.shape[2], c.q = y.shape[3];
  if (w.shape[1] <= 0 || c.c % w.shape[1] != 0) fail(g, fwd, "weight channels do not divide input channels");
  c.groups = c.c / w.shape[1];
  c.stride_h = attr(g, fwd, {"stride_h", "stride"});
  c.stride_w = attr(g, fwd, {"stride_w", "stride"});
  c.pad_h = attr(g, fwd, {"pad_h", "pad", "padding"});
  c.pad_w = attr(g, fwd, {"pad_w", "pad", "padding"});
  c.dil_h = attr_or(fwd, {"dilation_h", "dilation"}, 1);  // checked below through the output shape
  c.dil_w = attr_or(fwd, {"dilation_w", "dilation"}, 1);
  c.bias = first_of_kind(g, fwd.inputs, TensorKind::Weight, 1) != kNoTensor;
  const int64_t p = (c.h + 2 * c.pad_h - c.dil_h * (c.r - 1) - 1) / c.stride_h + 1;
  const int64_t q = (c.w + 2 * c.pad_w - c.dil_w * (c.s - 1) - 1) / c.stride_w + 1;
  if (p != c.p || q != c.q || y.shape[1] != c.k || y.shape[0] != c.n)
    fail(g, fwd, "output shape does not follow from input, weight, stride, padding and dilation");
  return c;
}

PoolShape pool_shape(const Graph& g, const Op& fwd) {
  const Tensor& x = g.tensor(need_in(g, fwd, 0));
  const Tensor& y = g.tensor(need_out(g, fwd, 0));
  if (x.shape.size() != 4 || y.shape.size() != 4) fail(g, fwd, "pooling input and output must be NCHW");
  PoolShape p;
  p.n = x.shape[0], p.c = x.shape[1], p.h = x.shape[2], p.w = x.shape[3], p.p = y.shape[2], p.q = y.shape[3];
  p.max = fwd.kind == OpKind::MaxPool;
  if (fwd.kind == OpKind::GlobalAvgPool || fwd.kind == OpKind::AdaptiveAvgPool) {
    // Adaptive pooling is a plain window when the output divides the input (always true for 1x1 outputs).
    if (p.p <= 0 || p.q <= 0 || p.h % p.p != 0 || p.w % p.q != 0)
      fail(g, fwd, "adaptive pooling with an output that does not divide the input has no cuDNN equivalent");
    p.win_h = p.h / p.p, p.win_w = p.w / p.q, p.stride_h = p.win_h, p.stride_w = p.win_w;
    return p;
  }
  p.win_h = attr(g, fwd, {"kh", "kernel_h", "k", "kernel"});
  p.win_w = attr(g, fwd, {"kw", "kernel_w", "k", "kernel"});
  p.stride_h = attr(g, fwd, {"stride_h", "stride"});
  p.stride_w = attr(g, fwd, {"stride_w", "stride"});
  p.pad_h = attr(g, fwd, {"pad_h", "pad", "padding"});
  p.pad_w = attr(g, fwd, {"pad_w", "pad", "padding"});
  p.include_pad = attr_or(fwd, {"count_include_pad"}, 1) != 0;
  // cuDNN computes floor((h + 2 pad - win) / stride) + 1; PyTorch's ceil_mode can add one row, which cuDNN
  // cannot produce: refuse rather than time a different shape.
  const int64_t ph = (p.h + 2 * p.pad_h - p.win_h) / p.stride_h + 1;
  const int64_t pw = (p.w + 2 * p.pad_w - p.win_w) / p.stride_w + 1;
  if (ph != p.p || pw != p.q) fail(g, fwd, "output shape differs from cuDNN's floor rule (ceil_mode?)");
  return p;
}

void add_step(KernelPlan& kp, KernelCall call, KernelArgs args, int64_t elements = 0) {
  KernelStep s;
  s.call = call;
  s.args = std::move(args);
  s.elements = elements;
  kp.steps.push_back(std::move(s));
}

void plan_conv(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::Conv2d ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  kp.conv = conv_shape(g, fwd);
  kp.needs_workspace = true;
  const TensorId x = fwd.inputs[0], y = fwd.outputs[0];
  const TensorId w = first_of_kind(g, fwd.inputs, TensorKind::Weight, 4);
  const TensorId b = first_of_kind(g, fwd.inputs, TensorKind::Weight, 1);
  kp.x_dims = g.tensor(x).shape;
  kp.y_dims = g.tensor(y).shape;
  kp.dtype = same_dtype(g, op, {x, y, w});
  if (op.kind == OpKind::Conv2d) {
    add_step(kp, KernelCall::ConvForward, {{arg(g, x), arg(g, w)}, {arg(g, y)}});
    if (b != kNoTensor) add_step(kp, KernelCall::AddTensor, {{arg(g, b)}, {arg(g, y)}});
    return;
  }
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {x, w}), "output gradient");
  if (op.kind == OpKind::Conv2dBwdData) {
    const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
    add_step(kp, KernelCall::ConvBackwardData, {{arg(g, dy), arg(g, w)}, {arg(g, dx)}});
    return;
  }
  const TensorId dw = require(g, op, find_shaped(g, op.outputs, g.tensor(w).shape), "weight gradient");
  add_step(kp, KernelCall::ConvBackwardFilter, {{arg(g, x), arg(g, dy)}, {arg(g, dw)}});
  if (b != kNoTensor) {
    const TensorId db = find_shaped(g, op.outputs, g.tensor(b).shape, {dw});
    add_step(kp, KernelCall::ConvBackwardBias, {{arg(g, dy)}, {db == kNoTensor ? side(g.tensor(b).bytes) : arg(g, db)}});
  }
}

void plan_batch_norm(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::BatchNorm ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.x_dims = dims4(g.tensor(x));
  kp.y_dims = kp.x_dims;
  kp.dtype = same_dtype(g, op, {x, y});
  // Per-channel fp32 vectors: scale and shift are the op's 1-d weights; cuDNN's running and saved statistics
  // are not graph tensors in every builder, so any missing one becomes a side buffer of C floats.
  const uint64_t cbytes = static_cast<uint64_t>(kp.x_dims[1]) * 4;
  auto weight_or_side = [&](int i) {
    TensorId id = first_of_kind(g, fwd.inputs, TensorKind::Weight, 1, i);
    return id == kNoTensor ? side(cbytes) : arg(g, id);
  };
  if (op.kind == OpKind::BatchNorm) {
    // in: x, scale, shift, running mean, running var; out: y, saved mean, saved inverse std
    add_step(kp, KernelCall::BatchNormForwardTraining,
             {{arg(g, x), weight_or_side(0), weight_or_side(1), side(cbytes), side(cbytes)},
              {arg(g, y), side(cbytes), side(cbytes)}});
    return;
  }
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {x}), "output gradient");
  const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
  std::vector<TensorId> dparams;
  for (TensorId id : op.outputs)
    if (id != dx && g.tensor(id).shape.size() == 1) dparams.push_back(id);
  auto dparam = [&](size_t i) { return i < dparams.size() ? arg(g, dparams[i]) : side(cbytes); };
  // in: x, dy, scale, saved mean, saved inverse std; out: dx, dscale, dshift
  add_step(kp, KernelCall::BatchNormBackward,
           {{arg(g, x), arg(g, dy), weight_or_side(0), side(cbytes), side(cbytes)}, {arg(g, dx), dparam(0), dparam(1)}});
}

void plan_activation(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::ReluBwd || op.kind == OpKind::GeluBwd ? forward_of(g, op) : op;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {x, y});
  const bool gelu = fwd.kind == OpKind::Gelu;
  kp.lib = gelu ? KernelLib::Ours : KernelLib::Cudnn;
  kp.x_dims = dims4(g.tensor(x));
  kp.y_dims = kp.x_dims;
  const Pointwise fn = gelu ? Pointwise::Gelu : fwd.kind == OpKind::Relu6 ? Pointwise::Relu6 : Pointwise::Relu;
  const int64_t n = numel(g.tensor(y));
  if (op.id == fwd.id) {
    add_step(kp, gelu ? KernelCall::ElementwiseUnary : KernelCall::ActivationForward, {{arg(g, x)}, {arg(g, y)}}, n);
  } else {
    // The saved tensor is the forward's output (ReLU) or input (GELU); the other input is the gradient.
    TensorId saved = contains(op.inputs, y) ? y : contains(op.inputs, x) ? x : kNoTensor;
    saved = require(g, op, saved, "saved forward");
    const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {saved}), "output gradient");
    const TensorId dx = need_out(g, op, 0);
    add_step(kp, gelu ? KernelCall::ElementwiseUnaryBackward : KernelCall::ActivationBackward,
             {{arg(g, saved), arg(g, dy)}, {arg(g, dx)}}, n);
  }
  kp.steps.back().fn = fn;
}

void plan_pool(const Graph& g, const Op& op, KernelPlan& kp) {
  const bool bwd = op.kind == OpKind::MaxPoolBwd || op.kind == OpKind::AvgPoolBwd;
  const Op& fwd = bwd ? forward_of(g, op) : op;
  kp.lib = KernelLib::Cudnn;
  kp.pool = pool_shape(g, fwd);
  const TensorId x = fwd.inputs[0], y = fwd.outputs[0];
  kp.x_dims = g.tensor(x).shape;
  kp.y_dims = g.tensor(y).shape;
  kp.dtype = same_dtype(g, op, {x, y});
  if (!bwd) {
    add_step(kp, KernelCall::PoolingForward, {{arg(g, x)}, {arg(g, y)}});
    return;
  }
  // cudnnPoolingBackward takes y, dy, x and writes dx. PyTorch keeps x (and indices) for max pooling and
  // nothing for average pooling: a role the graph does not keep is a side buffer of the same size.
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {x, y}), "output gradient");
  const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
  const Arg ya = contains(op.inputs, y) ? arg(g, y) : side(g.tensor(y).bytes);
  const Arg xa = contains(op.inputs, x) ? arg(g, x) : side(g.tensor(x).bytes);
  add_step(kp, KernelCall::PoolingBackward, {{ya, arg(g, dy), xa}, {arg(g, dx)}});
}

// cuBLAS products. Row-major shapes: Linear y[M, out] = x[M, in] * W[out, in]^T (+ b).
void plan_linear(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::Linear ? op : forward_of(g, op);
  kp.lib = KernelLib::Cublas;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  const TensorId w = require(g, fwd, first_of_kind(g, fwd.inputs, TensorKind::Weight, 2), "2-d weight");
  const TensorId b = first_of_kind(g, fwd.inputs, TensorKind::Weight, 1);
  kp.dtype = same_dtype(g, op, {x, y, w});
  const int64_t out_f = g.tensor(w).shape[0], in_f = g.tensor(w).shape[1];
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
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {x, w}), "output gradient");
  s.call = KernelCall::Gemm;
  if (op.kind == OpKind::LinearBwdData) {  // dx[M, in] = dy[M, out] * W[out, in]
    const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
    s.args = {{arg(g, dy), arg(g, w)}, {arg(g, dx)}};
    s.gemm = {rows, in_f, out_f, false, false, 1};
    kp.steps.push_back(s);
    return;
  }
  // dW[out, in] = dy[M, out]^T * x[M, in]; db[out] = sum over rows of dy
  const TensorId dw = require(g, op, find_shaped(g, op.outputs, g.tensor(w).shape), "weight gradient");
  s.args = {{arg(g, dy), arg(g, x)}, {arg(g, dw)}};
  s.gemm = {out_f, in_f, rows, true, false, 1};
  kp.steps.push_back(s);
  if (b != kNoTensor) {
    const TensorId db = find_shaped(g, op.outputs, g.tensor(b).shape, {dw});
    KernelStep bs;
    bs.call = KernelCall::BiasGrad;
    bs.args = {{arg(g, dy)}, {db == kNoTensor ? side(g.tensor(b).bytes) : arg(g, db)}};
    bs.rows = rows, bs.cols = out_f;
    kp.steps.push_back(bs);
  }
}

// MatMul a[..., m, k] * b[..., k, n]: a strided batched GEMM, or one GEMM over all rows when b has no batch.
void plan_matmul(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::MatMul ? op : forward_of(g, op);
  kp.lib = KernelLib::Cublas;
  const TensorId a = need_in(g, fwd, 0), b = need_in(g, fwd, 1), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {a, b, y});
  const auto& as = g.tensor(a).shape;
  const auto& bs = g.tensor(b).shape;
  if (as.size() < 2 || bs.size() < 2) fail(g, op, "matmul operands must have at least 2 dimensions");
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const int64_t batch_a = numel(g.tensor(a)) / (m * k), batch_b = numel(g.tensor(b)) / (k * n);
  if (batch_b != 1 && batch_b != batch_a) fail(g, op, "matmul batch dimensions do not match");
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
  const TensorId da = find_shaped(g, op.outputs, as);
  const TensorId db = find_shaped(g, op.outputs, bs, {da});
  if (da != kNoTensor) {  // da = dy * b^T
    s.args = {{arg(g, dy), arg(g, b)}, {arg(g, da)}};
    s.gemm = {rows, k, n, false, true, batch};
    kp.steps.push_back(s);
  }
  if (db != kNoTensor) {  // db = a^T * dy
    s.args = {{arg(g, a), arg(g, dy)}, {arg(g, db)}};
    s.gemm = {k, n, rows, true, false, batch};
    kp.steps.push_back(s);
  }
  if (kp.steps.empty()) fail(g, op, "matmul backward writes neither operand's gradient");
}

void plan_softmax(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = op.kind == OpKind::Softmax ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {x, y});
  const auto& s = g.tensor(x).shape;
  int64_t axis = attr(g, fwd, {"axis", "dim"});
  if (axis < 0) axis += static_cast<int64_t>(s.size());
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) fail(g, fwd, "softmax axis out of range");
  // (outer, C, inner, 1) with cuDNN's channel mode is a softmax over any one axis of a contiguous tensor.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[static_cast<size_t>(i)];
  for (size_t i = static_cast<size_t>(axis) + 1; i < s.size(); ++i) inner *= s[i];
  kp.x_dims = {outer, s[static_cast<size_t>(axis)], inner, 1};
  kp.y_dims = kp.x_dims;
  if (op.kind == OpKind::Softmax) {
    add_step(kp, KernelCall::SoftmaxForward, {{arg(g, x)}, {arg(g, y)}});
    return;
  }
  const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {y}), "output gradient");
  add_step(kp, KernelCall::SoftmaxBackward,
           {{contains(op.inputs, y) ? arg(g, y) : side(g.tensor(y).bytes), arg(g, dy)}, {arg(g, need_out(g, op, 0))}});
}

std::vector<Arg> args_of(const Graph& g, const std::vector<TensorId>& ids) {
  std::vector<Arg> v;
  for (TensorId id : ids) v.push_back(arg(g, id));
  return v;
}

// Row-wise kernels over the last dimension (layer norm, cross entropy, embedding rows).
void set_rows(KernelStep& s, const Tensor& t) {
  s.cols = t.shape.empty() ? 1 : t.shape.back();
  s.rows = s.cols == 0 ? 0 : numel(t) / s.cols;
}

void plan_ours(const Graph& g, const Op& op, KernelPlan& kp) {
  kp.lib = KernelLib::Ours;
  if (!op.outputs.empty()) kp.dtype = g.tensor(op.outputs[0]).dtype;
  else if (!op.inputs.empty()) kp.dtype = g.tensor(op.inputs[0]).dtype;
  KernelStep s;
  s.args = {args_of(g, op.inputs), args_of(g, op.outputs)};
  if (!op.outputs.empty()) s.elements = numel(g.tensor(op.outputs[0]));
  switch (op.kind) {
    case OpKind::Add: case OpKind::Mul:
      need_in(g, op, 1);
      s.call = KernelCall::ElementwiseBinary;
      s.fn = op.kind == OpKind::Add ? Pointwise::Add : Pointwise::Mul;
      break;
    case OpKind::MulBwd: s.call = KernelCall::ElementwiseBinary, s.fn = Pointwise::MulBwd; break;
    case OpKind::GradAccumulate: s.call = KernelCall::ElementwiseBinary, s.fn = Pointwise::Sum; break;
    case OpKind::Dropout: s.call = KernelCall::ElementwiseUnary, s.fn = Pointwise::Dropout; break;
    case OpKind::DropoutBwd: s.call = KernelCall::ElementwiseUnaryBackward, s.fn = Pointwise::Dropout; break;
    case OpKind::ZeroGrad: {
      // Zeroes every gradient it names (outputs, or inputs when the builder lists them there).
      for (TensorId id : op.outputs.empty() ? op.inputs : op.outputs) {
        KernelStep z;
        z.call = KernelCall::Fill;
        z.args.out = {arg(g, id)};
        z.elements = static_cast<int64_t>(g.tensor(id).bytes);
        kp.steps.push_back(z);
      }
      if (kp.steps.empty()) fail(g, op, "zero_grad names no tensor");
      return;
    }
    case OpKind::Flatten: case OpKind::Reshape: case OpKind::Copy: {
      // A distinct output tensor: its bytes are copied (a view would need no kernel, but then the graph would
      // not give it storage of its own).
      const Tensor& in = g.tensor(need_in(g, op, 0));
      const Tensor& out = g.tensor(need_out(g, op, 0));
      if (in.bytes != out.bytes) fail(g, op, "copy between tensors of different sizes");
      s.call = KernelCall::Copy;
      s.args = {{arg(g, in.id)}, {arg(g, out.id)}};
      s.rows = 1, s.cols = static_cast<int64_t>(in.bytes), s.src_pitch = s.cols, s.dst_pitch = s.cols;
      break;
    }
    case OpKind::Concat: case OpKind::ConcatBwd: {
      // Concat along `axis` of contiguous tensors: each part is `outer` rows of (its inner bytes), placed at a
      // column offset in rows of the whole's inner bytes. ConcatBwd copies the parts back out.
      const bool fwd = op.kind == OpKind::Concat;
      const Op& f = fwd ? op : forward_of(g, op);
      const Tensor& whole = g.tensor(need_out(g, f, 0));
      int64_t axis = attr(g, f, {"axis", "dim"});
      if (axis < 0) axis += static_cast<int64_t>(whole.shape.size());
      if (axis < 0 || axis >= static_cast<int64_t>(whole.shape.size())) fail(g, f, "concat axis out of range");
      int64_t outer = 1;
      for (int64_t i = 0; i < axis; ++i) outer *= whole.shape[static_cast<size_t>(i)];
      const int64_t whole_row = static_cast<int64_t>(whole.bytes) / outer;
      const std::vector<TensorId>& parts = fwd ? op.inputs : op.outputs;
      const TensorId big = fwd ? need_out(g, op, 0) : need_in(g, op, 0);
      int64_t offset = 0;
      for (TensorId part : parts) {
        KernelStep c;
        c.call = KernelCall::Copy;
        c.rows = outer;
        c.cols = static_cast<int64_t>(g.tensor(part).bytes) / outer;
        if (fwd) {
          c.args = {{arg(g, part)}, {arg(g, big)}};
          c.src_pitch = c.cols, c.dst_offset = offset, c.dst_pitch = whole_row;
        } else {
          c.args = {{arg(g, big)}, {arg(g, part)}};
          c.src_offset = offset, c.src_pitch = whole_row, c.dst_pitch = c.cols;
        }
        offset += c.cols;
        kp.steps.push_back(c);
      }
      if (offset != whole_row) fail(g, op, "concat parts do not add up to the whole");
      return;
    }
    case OpKind::LayerNorm: case OpKind::LayerNormBwd: {
      // Roles: x, gamma, beta (fp32 vectors over the last dimension; side buffers when the graph has none).
      const Op& f = op.kind == OpKind::LayerNorm ? op : forward_of(g, op);
      const TensorId x = need_in(g, f, 0), y = need_out(g, f, 0);
      set_rows(s, g.tensor(x));
      const uint64_t vec = static_cast<uint64_t>(s.cols) * 4;
      auto weight = [&](int i) {
        const TensorId id = first_of_kind(g, f.inputs, TensorKind::Weight, 1, i);
        return id == kNoTensor ? side(vec) : arg(g, id);
      };
      if (op.kind == OpKind::LayerNorm) {
        s.call = KernelCall::LayerNormForward;
        s.args = {{arg(g, x), weight(0), weight(1)}, {arg(g, y)}};
      } else {
        const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {x}), "output gradient");
        const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
        const TensorId dg = first_of_kind(g, op.outputs, TensorKind::Gradient, 1);
        s.call = KernelCall::LayerNormBackward;
        s.args = {{arg(g, x), arg(g, dy), weight(0)}, {arg(g, dx), dg == kNoTensor ? side(vec) : arg(g, dg)}};
      }
      break;
    }
    case OpKind::Embedding: case OpKind::EmbeddingBwd: {
      const Op& f = op.kind == OpKind::Embedding ? op : forward_of(g, op);
      const TensorId table = require(g, f, first_of_kind(g, f.inputs, TensorKind::Weight, 2), "embedding table");
      const TensorId ids = require(g, f, f.inputs[0] == table ? kNoTensor : f.inputs[0], "index");
      s.rows = numel(g.tensor(ids));
      s.cols = g.tensor(table).shape[1];
      if (op.kind == OpKind::Embedding) {
        s.call = KernelCall::EmbeddingForward;
        s.args = {{arg(g, ids), arg(g, table)}, {arg(g, need_out(g, op, 0))}};
      } else {
        const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(f.outputs[0]).shape, {ids}), "gradient");
        const TensorId dtable = require(g, op, find_shaped(g, op.outputs, g.tensor(table).shape), "table gradient");
        KernelStep z;  // the scatter accumulates: zero the table gradient first, as PyTorch does
        z.call = KernelCall::Fill;
        z.args.out = {arg(g, dtable)};
        z.elements = static_cast<int64_t>(g.tensor(dtable).bytes);
        kp.steps.push_back(z);
        s.call = KernelCall::EmbeddingBackward;
        s.args = {{arg(g, ids), arg(g, dy)}, {arg(g, dtable)}};
      }
      break;
    }
    case OpKind::CrossEntropyLoss: case OpKind::CrossEntropyLossBwd: {
      const Op& f = op.kind == OpKind::CrossEntropyLoss ? op : forward_of(g, op);
      const TensorId logits = need_in(g, f, 0);
      set_rows(s, g.tensor(logits));
      // Targets: the forward's integer input if the graph has one, else a side buffer of int64 class ids.
      TensorId target = kNoTensor;
      for (TensorId id : f.inputs)
        if (id != logits && (g.tensor(id).dtype == DType::I64 || g.tensor(id).dtype == DType::I32)) target = id;
      const Arg t = target == kNoTensor ? side(static_cast<uint64_t>(s.rows) * 8) : arg(g, target);
      if (target != kNoTensor && g.tensor(target).dtype != DType::I64)
        fail(g, f, "class targets must be int64");
      if (op.kind == OpKind::CrossEntropyLoss) {
        s.call = KernelCall::CrossEntropyForward;
        s.args = {{arg(g, logits), t}, {arg(g, need_out(g, op, 0))}};
      } else {
        const TensorId dlogits = require(g, op, find_shaped(g, op.outputs, g.tensor(logits).shape), "logit gradient");
        s.call = KernelCall::CrossEntropyBackward;
        s.args = {{arg(g, logits), t}, {arg(g, dlogits)}};
      }
      break;
    }
    case OpKind::SgdMomentumUpdate: case OpKind::AdamUpdate: {
      // Roles by tensor kind: the weight, its gradient and the optimizer state(s); updated in place.
      const TensorId w = require(g, op, first_of_kind(g, op.inputs, TensorKind::Weight), "weight");
      const TensorId gr = require(g, op, first_of_kind(g, op.inputs, TensorKind::Gradient), "gradient");
      const TensorId m = require(g, op, first_of_kind(g, op.inputs, TensorKind::OptimizerState), "optimizer state");
      s.args = {{arg(g, w), arg(g, gr), arg(g, m)}, {}};
      if (op.kind == OpKind::AdamUpdate)
        s.args.in.push_back(arg(g, require(g, op, first_of_kind(g, op.inputs, TensorKind::OptimizerState, 0, 1),
                                           "second moment")));
      s.call = op.kind == OpKind::AdamUpdate ? KernelCall::Adam : KernelCall::SgdMomentum;
      s.elements = numel(g.tensor(w));
      break;
    }
    default:
      // Transpose, Pad, PadBwd and Other: a kernel of ours that reads every input byte and writes every output
      // byte once, which is what these data-movement ops cost.
      s.call = KernelCall::MemoryBound;
      break;
  }
  kp.steps.push_back(std::move(s));
}

}  // namespace

KernelPlan plan_kernel(const Graph& g, const Op& op) {
  KernelPlan kp;
  kp.op = op.id;
  switch (op.kind) {
    case OpKind::Conv2d: case OpKind::Conv2dBwdData: case OpKind::Conv2dBwdFilter: plan_conv(g, op, kp); break;
    case OpKind::BatchNorm: case OpKind::BatchNormBwd: plan_batch_norm(g, op, kp); break;
    case OpKind::Relu: case OpKind::Relu6: case OpKind::ReluBwd: case OpKind::Gelu: case OpKind::GeluBwd:
      plan_activation(g, op, kp);
      break;
    case OpKind::MaxPool: case OpKind::AvgPool: case OpKind::GlobalAvgPool: case OpKind::AdaptiveAvgPool:
    case OpKind::MaxPoolBwd: case OpKind::AvgPoolBwd:
      plan_pool(g, op, kp);
      break;
    case OpKind::Linear: case OpKind::LinearBwdData: case OpKind::LinearBwdWeight: plan_linear(g, op, kp); break;
    case OpKind::MatMul: case OpKind::MatMulBwd: plan_matmul(g, op, kp); break;
    case OpKind::Softmax: case OpKind::SoftmaxBwd: plan_softmax(g, op, kp); break;
    default: plan_ours(g, op, kp); break;
  }
  if ((kp.lib != KernelLib::Ours) && kp.dtype != DType::F32 && kp.dtype != DType::BF16 && kp.dtype != DType::F16)
    fail(g, op, std::string("cuDNN/cuBLAS run for data type ") + to_string(kp.dtype) + " is not supported");
  return kp;
}

std::vector<KernelPlan> plan_graph(const Graph& g) {
  std::vector<KernelPlan> v;
  v.reserve(g.ops().size());
  for (const Op& op : g.ops()) v.push_back(plan_kernel(g, op));
  return v;
}

std::map<TensorId, int64_t> index_ranges(const Graph& g) {
  std::map<TensorId, int64_t> r;
  for (const Op& op : g.ops()) {
    if (op.kind == OpKind::Embedding && op.inputs.size() >= 2) {
      const TensorId table = first_of_kind(g, op.inputs, TensorKind::Weight, 2);
      if (table != kNoTensor && op.inputs[0] != table) r[op.inputs[0]] = g.tensor(table).shape[0];
    }
    if (op.kind == OpKind::CrossEntropyLoss && !op.inputs.empty()) {
      const Tensor& logits = g.tensor(op.inputs[0]);
      for (TensorId id : op.inputs)
        if (id != logits.id && g.tensor(id).dtype == DType::I64 && !logits.shape.empty())
          r[id] = logits.shape.back();
    }
  }
  return r;
}

std::string KernelPlan::describe() const {
  std::ostringstream o;
  auto dims = [&](const std::vector<int64_t>& d) {
    o << '[';
    for (size_t i = 0; i < d.size(); ++i) o << (i ? "," : "") << d[i];
    o << ']';
  };
  o << "op " << op << ' ' << to_string(lib) << ' ' << to_string(dtype) << ':';
  for (const KernelStep& s : steps) {
    o << ' ' << to_string(s.call);
    if (s.call == KernelCall::Gemm || s.call == KernelCall::GemmStridedBatched)
      o << "(m=" << s.gemm.m << ",n=" << s.gemm.n << ",k=" << s.gemm.k << (s.gemm.trans_a ? ",At" : "")
        << (s.gemm.trans_b ? ",Bt" : "") << (s.gemm.batch > 1 ? ",batch=" + std::to_string(s.gemm.batch) : "") << ")";
  }
  if (!x_dims.empty()) o << " x", dims(x_dims);
  if (!y_dims.empty()) o << " y", dims(y_dims);
  if (needs_workspace)
    o << " conv k=" << conv.k << " r=" << conv.r << " s=" << conv.s << " stride=" << conv.stride_h << "x"
      << conv.stride_w << " pad=" << conv.pad_h << "x" << conv.pad_w << " groups=" << conv.groups;
  return o.str();
}

}  // namespace dlsim
