// The translation plan's cuDNN families: convolutions (forward, backward data and filter, bias), batch norm,
// activations, pooling (cuDNN's where its window rule is PyTorch's, else our kernel) and softmax.

#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {

namespace {

// Convolution shape from the forward op: kernel from the weight, groups from channels, stride and padding from
// the attributes, checked against the output's shape so that a misread attribute cannot pass silently.
ConvShape conv_shape(const Graph& g, const Op& fwd) {
  const Tensor& x = g.tensor(need_in(g, fwd, 0));
  const Tensor& y = g.tensor(need_out(g, fwd, 0));
  // [x, w, (b)] by position: under autocast the weight is its bf16 cast, an activation rather than a Weight.
  const Tensor& w = g.tensor(need_in(g, fwd, 1));
  if (x.shape.size() != 4 || y.shape.size() != 4 || w.shape.size() != 4)
    fail(g, fwd, "convolution input, weight and output must be 4-d");
  ConvShape c;
  c.n = x.shape[0], c.c = x.shape[1], c.h = x.shape[2], c.w = x.shape[3];
  c.k = w.shape[0], c.r = w.shape[2], c.s = w.shape[3];
  c.p = y.shape[2], c.q = y.shape[3];
  if (w.shape[1] <= 0 || c.c % w.shape[1] != 0) fail(g, fwd, "weight channels do not divide input channels");
  c.groups = c.c / w.shape[1];
  c.stride_h = attr(g, fwd, Attr::stride_h);
  c.stride_w = attr(g, fwd, Attr::stride_w);
  c.pad_h = attr(g, fwd, Attr::pad_h);
  c.pad_w = attr(g, fwd, Attr::pad_w);
  c.dil_h = c.dil_w = fwd.attr(Attr::dilation);  // 1 when unset; checked below through the output shape
  c.bias = fwd.inputs.size() > 2;
  c.channels_last = fwd.attr(Attr::channels_last) != 0;
  c.tf32 = fwd.attr(Attr::tf32) != 0;
  if (c.bias && g.tensor(fwd.inputs[2]).shape != std::vector<int64_t>{c.k}) fail(g, fwd, "bias is not of K elements");
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
    if (p.p <= 0 || p.q <= 0 || p.p > p.h || p.q > p.w) fail(g, fwd, "adaptive pooling output larger than its input");
    p.max = false;
    if (p.h % p.p != 0 || p.w % p.q != 0) {  // uneven windows: ours, with PyTorch's start/end rule
      p.adaptive = true;
      return p;
    }
    p.win_h = p.h / p.p, p.win_w = p.w / p.q, p.stride_h = p.win_h, p.stride_w = p.win_w;
    return p;
  }
  // PyTorch's pooling windows here are square: one kernel, stride and padding for both axes
  p.win_h = p.win_w = attr(g, fwd, Attr::kernel);
  p.stride_h = p.stride_w = attr(g, fwd, Attr::stride);
  p.pad_h = p.pad_w = attr(g, fwd, Attr::pad);
  if (fwd.kind == OpKind::AvgPool) p.include_pad = fwd.attr(Attr::count_include_pad) != 0;  // max: no such choice
  // cuDNN computes floor((h + 2 pad - win) / stride) + 1. PyTorch's ceil_mode can add a last row (column)
  // whose window starts inside the input but hangs over its far edge; cuDNN's symmetric padding cannot express
  // that, so those pools run on a kernel of ours with PyTorch's rule. Any other shape is an error.
  auto out = [](int64_t in, int64_t k, int64_t s, int64_t pad, bool ceil) {
    const int64_t num = in + 2 * pad - k;
    int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
    if (ceil && (o - 1) * s >= in + pad) --o;
    return o;
  };
  const bool ceil = fwd.attr(Attr::ceil_mode) != 0;
  if (out(p.h, p.win_h, p.stride_h, p.pad_h, ceil) != p.p || out(p.w, p.win_w, p.stride_w, p.pad_w, ceil) != p.q)
    fail(g, fwd, "output shape follows neither the floor nor the ceil_mode rule of its window, stride and padding");
  p.ceil_mode = out(p.h, p.win_h, p.stride_h, p.pad_h, false) != p.p ||
                out(p.w, p.win_w, p.stride_w, p.pad_w, false) != p.q;
  return p;
}

}  // namespace

void translate_conv(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::Conv2d ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  kp.conv = conv_shape(g, fwd);
  kp.needs_workspace = true;
  const TensorId x = fwd.inputs[0], y = fwd.outputs[0], w = fwd.inputs[1];
  const TensorId b = fwd.inputs.size() > 2 ? fwd.inputs[2] : kNoTensor;
  kp.x_dims = g.tensor(x).shape;
  kp.y_dims = g.tensor(y).shape;
  kp.dtype = same_dtype(g, op, {x, y, w, b});
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
    add_step(kp, KernelCall::ConvBackwardBias,
             {{arg(g, dy)}, {db == kNoTensor ? side(g.tensor(b).bytes, kp.dtype) : arg(g, db)}});
  }
}

void translate_batch_norm(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::BatchNorm ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.x_dims = dims4(g.tensor(x));
  kp.y_dims = kp.x_dims;
  kp.dtype = same_dtype(g, op, {x, y});
  // Per-channel fp32 vectors, by the builder's convention [x, gamma, beta, running_mean, running_var] ->
  // [y, save_mean, save_invstd, running_mean, running_var]; a role a graph does not hold (a hand-built or
  // imported one) becomes a side buffer of C floats.
  const int64_t c = kp.x_dims[1];
  const uint64_t cbytes = static_cast<uint64_t>(c) * 4;
  auto vec = [&](const std::vector<TensorId>& ids, size_t i) {
    if (i < ids.size()) {
      const Tensor& t = g.tensor(ids[i]);
      if (t.shape != std::vector<int64_t>{c} || t.dtype != DType::F32)
        fail(g, fwd, "per-channel tensor '" + t.name + "' is not " + std::to_string(c) + " fp32 values");
      return arg(g, ids[i]);
    }
    return side(cbytes);
  };
  if (op.kind == OpKind::BatchNorm) {
    // in: x, scale, shift, running mean, running var; out: y, saved mean, saved inverse std
    add_step(kp, KernelCall::BatchNormForwardTraining,
             {{arg(g, x), vec(fwd.inputs, 1), vec(fwd.inputs, 2), vec(fwd.inputs, 3), vec(fwd.inputs, 4)},
              {arg(g, y), vec(fwd.outputs, 1), vec(fwd.outputs, 2)}});
    return;
  }
  const TensorId dy = output_grad(g, op, fwd);
  const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
  same_dtype(g, op, {x, dy, dx});
  std::vector<TensorId> dparams;
  for (TensorId id : op.outputs)
    if (id != dx && g.tensor(id).shape.size() == 1) dparams.push_back(id);
  auto dparam = [&](size_t i) { return i < dparams.size() ? arg(g, dparams[i]) : side(cbytes); };
  // The saved statistics the backward reads: the forward's outputs 1 and 2 when the backward lists them.
  auto saved = [&](size_t i) {
    return i < fwd.outputs.size() && contains(op.inputs, fwd.outputs[i]) ? vec(fwd.outputs, i) : side(cbytes);
  };
  // in: x, dy, scale, saved mean, saved inverse std; out: dx, dscale, dshift
  add_step(kp, KernelCall::BatchNormBackward,
           {{arg(g, x), arg(g, dy), vec(fwd.inputs, 1), saved(1), saved(2)}, {arg(g, dx), dparam(0), dparam(1)}});
}

void translate_activation(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::ReluBwd || op.kind == OpKind::GeluBwd ? forward_of(g, op) : op;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {x, y});
  const bool gelu = fwd.kind == OpKind::Gelu;
  kp.lib = gelu ? KernelLib::Ours : KernelLib::Cudnn;
  kp.x_dims = dims4(g.tensor(x));
  kp.y_dims = kp.x_dims;
  // GPT-2's gelu_new is the tanh approximation; a graph says so with approximate=1 (the erf form otherwise).
  const Pointwise fn = gelu ? Pointwise::Gelu : fwd.kind == OpKind::Relu6 ? Pointwise::Relu6 : Pointwise::Relu;
  const int64_t n = numel(g.tensor(y));
  if (op.id == fwd.id) {
    // ReLU6 in place lists autograd's saved clone as a second input ([x, saved] -> [x]); it is not read here.
    add_step(kp, gelu ? KernelCall::ElementwiseUnary : KernelCall::ActivationForward, {{arg(g, x)}, {arg(g, y)}}, n);
  } else {
    // The saved tensor: ReLU's output, ReLU6's input (its clone when in place, the forward's second input),
    // GELU's input. The other input is the gradient.
    TensorId saved = kNoTensor;
    if (fwd.kind == OpKind::Relu6 && fwd.inputs.size() > 1) saved = fwd.inputs[1];
    else if (fwd.kind == OpKind::Relu6 || gelu) saved = x;
    else saved = y;
    if (!contains(op.inputs, saved)) saved = contains(op.inputs, y) ? y : contains(op.inputs, x) ? x : kNoTensor;
    saved = require(g, op, saved, "saved forward");
    const TensorId dy = require(g, op, find_shaped(g, op.inputs, g.tensor(y).shape, {saved}), "output gradient");
    const TensorId dx = need_out(g, op, 0);
    if (!gelu) same_dtype(g, op, {saved, dy, dx});
    add_step(kp, gelu ? KernelCall::ElementwiseUnaryBackward : KernelCall::ActivationBackward,
             {{arg(g, saved), arg(g, dy)}, {arg(g, dx)}}, n);
  }
  kp.steps.back().fn = fn;
}

void translate_pool(const Graph& g, const Op& op, OpTranslation& kp) {
  const bool bwd = op.kind == OpKind::MaxPoolBwd || op.kind == OpKind::AvgPoolBwd;
  const Op& fwd = bwd ? forward_of(g, op) : op;
  kp.pool = pool_shape(g, fwd);
  const bool ours = kp.pool.ceil_mode || kp.pool.adaptive;
  kp.lib = ours ? KernelLib::Ours : KernelLib::Cudnn;
  const TensorId x = fwd.inputs[0], y = fwd.outputs[0];
  kp.x_dims = g.tensor(x).shape;
  kp.y_dims = g.tensor(y).shape;
  kp.dtype = same_dtype(g, op, {x, y});
  // Max pooling's argmax indices (int64, PyTorch's max_pool2d_with_indices): the forward's second output.
  const TensorId idx = kp.pool.max && fwd.outputs.size() > 1 && g.tensor(fwd.outputs[1]).dtype == DType::I64
                           ? fwd.outputs[1] : kNoTensor;
  const Arg idx_arg = idx != kNoTensor ? arg(g, idx) : side(g.tensor(y).bytes / dtype_bytes(kp.dtype) * 8, DType::I64);
  const int64_t n = numel(g.tensor(y));
  if (!bwd) {
    if (ours) {
      KernelArgs a{{arg(g, x)}, {arg(g, y)}};
      if (kp.pool.max) a.out.push_back(idx_arg);
      add_step(kp, KernelCall::Pool2dForward, a, n);
    } else {
      add_step(kp, KernelCall::PoolingForward, {{arg(g, x)}, {arg(g, y)}});
    }
    return;
  }
  const TensorId dy = output_grad(g, op, fwd);
  const TensorId dx = require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient");
  same_dtype(g, op, {x, dy, dx});
  if (ours) {
    // Ours reads dy and, for max pooling, the indices (as PyTorch's backward does): in: dy, (indices).
    KernelArgs a{{arg(g, dy)}, {arg(g, dx)}};
    if (kp.pool.max) a.in.push_back(idx != kNoTensor && contains(op.inputs, idx) ? idx_arg : side(idx_arg.bytes, DType::I64));
    add_step(kp, KernelCall::Pool2dBackward, a, numel(g.tensor(x)));
    return;
  }
  // cudnnPoolingBackward takes y, dy, x and writes dx. PyTorch keeps x (and indices) for max pooling and
  // nothing for average pooling: a role the graph does not keep is a side buffer of the same size.
  const Arg ya = contains(op.inputs, y) ? arg(g, y) : side(g.tensor(y).bytes, kp.dtype);
  const Arg xa = contains(op.inputs, x) ? arg(g, x) : side(g.tensor(x).bytes, kp.dtype);
  add_step(kp, KernelCall::PoolingBackward, {{ya, arg(g, dy), xa}, {arg(g, dx)}});
}

void translate_softmax(const Graph& g, const Op& op, OpTranslation& kp) {
  const Op& fwd = op.kind == OpKind::Softmax ? op : forward_of(g, op);
  kp.lib = KernelLib::Cudnn;
  const TensorId x = need_in(g, fwd, 0), y = need_out(g, fwd, 0);
  kp.dtype = same_dtype(g, op, {x, y});
  const auto& s = g.tensor(x).shape;
  int64_t axis = attr(g, fwd, Attr::axis);
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
  const TensorId dx = need_out(g, op, 0);
  same_dtype(g, op, {y, dy, dx});
  add_step(kp, KernelCall::SoftmaxBackward,
           {{contains(op.inputs, y) ? arg(g, y) : side(g.tensor(y).bytes, kp.dtype), arg(g, dy)}, {arg(g, dx)}});
}

}  // namespace dlsim::validate_internal
