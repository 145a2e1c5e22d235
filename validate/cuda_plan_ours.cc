// The translation plan's ops that run on small kernels of ours (validate/cuda/kernels.cu) or plain copies:
// element-wise and broadcast arithmetic, casts, data movement (concat, permute, pad/crop, select), layer norm,
// embedding, cross entropy, optimizer updates, and the OpKind::Other ops the builders make (select, tanh, LRN,
// the reduction of a broadcast operand's gradient).
#include "validate/cuda_plan_detail.h"

namespace dlsim::plan_detail {
namespace {

// Row-wise kernels over the last dimension (layer norm, cross entropy).
void set_rows(KernelStep& s, const Tensor& t) {
  s.cols = t.shape.empty() ? 1 : t.shape.back();
  s.rows = s.cols == 0 ? 0 : numel(t) / s.cols;
}

KernelStep step(KernelCall call, KernelArgs args, int64_t elements = 0) {
  KernelStep s;
  s.call = call;
  s.args = std::move(args);
  s.elements = elements;
  return s;
}

KernelStep fill_zero(const Arg& out) { return step(KernelCall::Fill, {{}, {out}}, static_cast<int64_t>(out.bytes)); }

// A contiguous copy of all bytes, or a cast when the types differ (autocast's copies and their backward).
KernelStep copy_or_cast(const Graph& g, const Op& op, TensorId in, TensorId out) {
  const Tensor& a = g.tensor(in);
  const Tensor& b = g.tensor(out);
  if (numel(a) != numel(b)) fail(g, op, "copy between tensors of different element counts");
  if (a.dtype == b.dtype) {
    KernelStep s = step(KernelCall::Copy, {{arg(g, in)}, {arg(g, out)}});
    s.rows = 1, s.cols = static_cast<int64_t>(a.bytes), s.src_pitch = s.cols, s.dst_pitch = s.cols;
    return s;
  }
  const auto fp = [](DType d) { return d == DType::F32 || d == DType::BF16; };
  if (!fp(a.dtype) || !fp(b.dtype))
    fail(g, op, std::string("no cast kernel from ") + to_string(a.dtype) + " to " + to_string(b.dtype));
  KernelStep s = step(KernelCall::ElementwiseUnary, {{arg(g, in)}, {arg(g, out)}}, numel(b));
  s.fn = Pointwise::Cast;
  return s;
}

// Permutation (attrs perm0..perm{r-1}: output axis i is input axis perm_i) as a gather. Training graphs elide
// views, so one side may be the unviewed tensor (a head split permutes the [B, S, heads, d] view of a
// [B, S, H] tensor): the side whose rank is the permutation's gives the shapes, the other must match in size.
NdMap permute_map(const Graph& g, const Op& op, const Tensor& x, const Tensor& y) {
  size_t r = 0;
  while (op.attrs.has("perm" + std::to_string(r))) ++r;
  if (r == 0 || r > kMaxRank) fail(g, op, "transpose needs attributes perm0..perm{rank-1} (rank at most 6)");
  std::vector<int64_t> perm(r);
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < r; ++i) {
    perm[i] = op.attrs.get("perm" + std::to_string(i));
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(r) || seen[static_cast<size_t>(perm[i])])
      fail(g, op, "invalid permutation");
    seen[static_cast<size_t>(perm[i])] = true;
  }
  std::vector<int64_t> in(r), out(r);
  if (x.shape.size() == r) {
    in = x.shape;
    for (size_t i = 0; i < r; ++i) out[i] = in[static_cast<size_t>(perm[i])];
    if (y.shape.size() == r && y.shape != out) fail(g, op, "output shape is not the permuted input shape");
  } else if (y.shape.size() == r) {
    out = y.shape;
    for (size_t i = 0; i < r; ++i) in[static_cast<size_t>(perm[i])] = out[i];
  } else {
    fail(g, op, "neither the input nor the output has the permutation's rank");
  }
  if (numel(x) != numel(y)) fail(g, op, "transpose input and output sizes differ");
  const std::vector<int64_t> st = strides_of(in);
  NdMap m;
  for (size_t i = 0; i < r; ++i) {
    m.dims.push_back(out[i]);
    m.strides.push_back(st[static_cast<size_t>(perm[i])]);
    m.shift.push_back(0);
    m.bound.push_back(out[i]);
  }
  return m;
}

// Zero padding (begin/end may be negative: a crop) of x into y; `inverse` maps y's gradient back onto x's
// shape (PadBwd: the gradient of the kept region, zero where x was cropped away).
NdMap pad_map(const Graph& g, const Op& op, const Op& fwd, const Tensor& x, const Tensor& y, bool inverse) {
  const size_t r = x.shape.size();
  if (y.shape.size() != r || r > kMaxRank) fail(g, op, "pad of rank " + std::to_string(r) + " is not supported");
  const Tensor& src = inverse ? y : x;
  const Tensor& dst = inverse ? x : y;
  const std::vector<int64_t> st = strides_of(src.shape);
  NdMap m;
  for (size_t i = 0; i < r; ++i) {
    const int64_t begin = attr(g, fwd, {("pad_begin" + std::to_string(i)).c_str()});
    const int64_t end = attr(g, fwd, {("pad_end" + std::to_string(i)).c_str()});
    if (x.shape[i] + begin + end != y.shape[i]) fail(g, fwd, "output shape is not the input padded by pad_begin/pad_end");
    m.dims.push_back(dst.shape[i]);
    m.strides.push_back(st[i]);
    m.shift.push_back(inverse ? -begin : begin);
    m.bound.push_back(src.shape[i]);
  }
  return m;
}

// Sum of a gradient over the axes its operand was broadcast along: `full` is the gradient's shape.
NdMap reduce_map(const Graph& g, const Op& op, const std::vector<int64_t>& full, const std::vector<int64_t>& to) {
  if (to.size() > full.size() || full.size() > kMaxRank) fail(g, op, "cannot reduce to a higher rank");
  NdMap m;
  const size_t lead = full.size() - to.size();
  m.dims = full;
  m.strides = strides_of(full);
  m.shift.assign(full.size(), 0);
  for (size_t d = 0; d < full.size(); ++d) {
    const int64_t len = d < lead ? 1 : to[d - lead];
    if (len != full[d] && len != 1) fail(g, op, "gradient shape does not reduce to its operand's shape");
    m.bound.push_back(len);
  }
  return m;
}

void plan_elementwise(const Graph& g, const Op& op, KernelPlan& kp) {
  const TensorId a = need_in(g, op, 0), b = need_in(g, op, 1), y = need_out(g, op, 0);
  KernelStep s = step(KernelCall::ElementwiseBinary, {{arg(g, a), arg(g, b)}, {arg(g, y)}}, numel(g.tensor(y)));
  s.fn = op.kind == OpKind::Add ? Pointwise::Add : Pointwise::Mul;
  s.map_a = broadcast_map(g, op, g.tensor(a).shape, g.tensor(y).shape);
  s.map_b = broadcast_map(g, op, g.tensor(b).shape, g.tensor(y).shape);
  kp.steps.push_back(s);
}

// d(a*b): da = dy * b, db = dy * a, each summed down to its operand's shape when it was broadcast.
// training.cc: inputs [dy, (b if da), (a if db)], outputs [(da), (db)].
void plan_mul_backward(const Graph& g, const Op& op, KernelPlan& kp) {
  const Op& fwd = forward_of(g, op);
  const TensorId a = need_in(g, fwd, 0), b = need_in(g, fwd, 1), y = need_out(g, fwd, 0);
  const TensorId dy = output_grad(g, op, fwd);
  const auto& ys = g.tensor(y).shape;
  size_t next = 0;
  auto one = [&](TensorId self, TensorId other) {
    const TensorId d = require(g, op, next < op.outputs.size() ? op.outputs[next++] : kNoTensor, "operand gradient");
    if (g.tensor(d).shape != g.tensor(self).shape) fail(g, op, "operand gradient does not have its operand's shape");
    const bool reduce = g.tensor(d).shape != ys;
    const Arg full = reduce ? side(static_cast<uint64_t>(numel(g.tensor(y))) * dtype_bytes(g.tensor(d).dtype),
                                   g.tensor(d).dtype)
                            : arg(g, d);
    KernelStep s = step(KernelCall::ElementwiseBinary, {{arg(g, dy), arg(g, other)}, {full}}, numel(g.tensor(y)));
    s.fn = Pointwise::Mul;
    s.map_a = broadcast_map(g, op, g.tensor(dy).shape, ys);
    s.map_b = broadcast_map(g, op, g.tensor(other).shape, ys);
    kp.steps.push_back(s);
    if (reduce) {
      KernelStep r = step(KernelCall::ReduceBroadcast, {{full}, {arg(g, d)}}, numel(g.tensor(d)));
      r.map_a = reduce_map(g, op, ys, g.tensor(d).shape);
      kp.steps.push_back(r);
    }
  };
  if (a == b || contains(op.inputs, b)) one(a, b);
  if (a != b && contains(op.inputs, a)) one(b, a);
  if (kp.steps.empty()) fail(g, op, "mul backward keeps neither operand, so it computes no gradient");
}

void plan_layer_norm(const Graph& g, const Op& op, KernelPlan& kp) {
  // [x, gamma, beta] -> [y, mean, rstd]; backward [dy, x, gamma, beta, mean, rstd] -> [(dx), (dgamma), (dbeta)].
  const Op& f = op.kind == OpKind::LayerNorm ? op : forward_of(g, op);
  const TensorId x = need_in(g, f, 0), y = need_out(g, f, 0);
  KernelStep s;
  set_rows(s, g.tensor(x));
  const std::vector<int64_t> vshape{s.cols};
  auto vec = [&](const std::vector<TensorId>& ids, size_t i, int64_t n) {
    if (i < ids.size()) {
      const Tensor& t = g.tensor(ids[i]);
      if (numel(t) != n || t.dtype != DType::F32) fail(g, f, "'" + t.name + "' is not " + std::to_string(n) + " fp32 values");
      return arg(g, ids[i]);
    }
    return side(static_cast<uint64_t>(n) * 4);
  };
  if (g.tensor(x).dtype != DType::F32) fail(g, f, "layer norm runs in fp32 (autocast casts its input up)");
  if (op.kind == OpKind::LayerNorm) {
    s.call = KernelCall::LayerNormForward;
    s.args = {{arg(g, x), vec(f.inputs, 1, s.cols), vec(f.inputs, 2, s.cols)},
              {arg(g, y), vec(f.outputs, 1, s.rows), vec(f.outputs, 2, s.rows)}};
    kp.steps.push_back(s);
    return;
  }
  const TensorId dy = output_grad(g, op, f);
  auto saved = [&](size_t i) {
    return i < f.outputs.size() && contains(op.inputs, f.outputs[i]) ? vec(f.outputs, i, s.rows)
                                                                     : side(static_cast<uint64_t>(s.rows) * 4);
  };
  const TensorId dx = find_shaped(g, op.outputs, g.tensor(x).shape);
  std::vector<TensorId> dparams;
  for (TensorId id : op.outputs)
    if (id != dx && g.tensor(id).shape == vshape) dparams.push_back(id);
  if (dx != kNoTensor) {
    s.call = KernelCall::LayerNormBackward;
    s.args = {{arg(g, x), arg(g, dy), vec(f.inputs, 1, s.cols), saved(1), saved(2)}, {arg(g, dx)}};
    kp.steps.push_back(s);
  }
  if (!dparams.empty()) {
    // dgamma = sum over rows of dy * xhat, dbeta = sum of dy: outputs in the forward's order [dgamma, dbeta].
    KernelStep p = s;
    p.call = KernelCall::LayerNormParamGrad;
    p.args = {{arg(g, x), arg(g, dy), saved(1), saved(2)},
              {arg(g, dparams[0]), dparams.size() > 1 ? arg(g, dparams[1]) : side(static_cast<uint64_t>(s.cols) * 4)}};
    kp.steps.push_back(p);
  }
  if (kp.steps.empty()) fail(g, op, "layer norm backward writes no gradient");
}

void plan_cross_entropy(const Graph& g, const Op& op, KernelPlan& kp) {
  // [logits, labels] -> [loss, log_probs]; backward [log_probs, labels] -> [dlogits] (autograd keeps the
  // log-probabilities, not the logits).
  const Op& f = op.kind == OpKind::CrossEntropyLoss ? op : forward_of(g, op);
  const TensorId logits = need_in(g, f, 0);
  KernelStep s;
  set_rows(s, g.tensor(logits));
  // The logits may be the unflattened [N, C, 1, 1] tensor (views elided): the builder's classes attr rules.
  s.cols = attr_or(f, {"classes"}, s.cols);
  if (s.cols <= 0 || numel(g.tensor(logits)) % s.cols != 0) fail(g, f, "logits are not a whole number of rows");
  s.rows = numel(g.tensor(logits)) / s.cols;
  if (g.tensor(logits).dtype != DType::F32) fail(g, f, "cross entropy runs in fp32 (autocast casts its input up)");
  TensorId target = kNoTensor;
  for (TensorId id : f.inputs)
    if (id != logits && (g.tensor(id).dtype == DType::I64 || g.tensor(id).dtype == DType::I32)) target = id;
  if (target != kNoTensor && (g.tensor(target).dtype != DType::I64 || numel(g.tensor(target)) != s.rows))
    fail(g, f, "class targets must be one int64 per row");
  const Arg t = target == kNoTensor ? side(static_cast<uint64_t>(s.rows) * 8, DType::I64) : arg(g, target);
  const TensorId logp = f.outputs.size() > 1 ? f.outputs[1] : kNoTensor;
  if (logp != kNoTensor && numel(g.tensor(logp)) != s.rows * s.cols) fail(g, f, "log_probs is not of the logits' size");
  const Arg lp = logp != kNoTensor ? arg(g, logp) : side(static_cast<uint64_t>(s.rows * s.cols) * 4);
  if (op.kind == OpKind::CrossEntropyLoss) {
    s.call = KernelCall::CrossEntropyForward;
    s.args = {{arg(g, logits), t}, {arg(g, need_out(g, op, 0)), lp}};
  } else {
    const TensorId dlogits = require(g, op, find_shaped(g, op.outputs, g.tensor(logits).shape), "logit gradient");
    s.call = KernelCall::CrossEntropyBackward;
    s.args = {{contains(op.inputs, lp.id) ? lp : side(lp.bytes), t}, {arg(g, dlogits)}};
  }
  kp.steps.push_back(s);
}

void plan_concat(const Graph& g, const Op& op, KernelPlan& kp) {
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
  const TensorId big = fwd ? need_out(g, op, 0) : require(g, op, find_shaped(g, op.inputs, whole.shape), "gradient");
  int64_t offset = 0;
  for (TensorId part : parts) {
    if (g.tensor(part).dtype != g.tensor(big).dtype)
      fail(g, op, "concat of parts of different data types (a byte copy would not convert them)");
    KernelStep c = step(KernelCall::Copy, {});
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
}

}  // namespace

void plan_ours(const Graph& g, const Op& op, KernelPlan& kp) {
  kp.lib = KernelLib::Ours;
  if (!op.outputs.empty()) kp.dtype = g.tensor(op.outputs[0]).dtype;
  else if (!op.inputs.empty()) kp.dtype = g.tensor(op.inputs[0]).dtype;
  switch (op.kind) {
    case OpKind::Add: case OpKind::Mul: plan_elementwise(g, op, kp); return;
    case OpKind::MulBwd: plan_mul_backward(g, op, kp); return;
    case OpKind::GradAccumulate: {
      // out = in0 + in1 (+ in2 ...); in place when out is one of the inputs (autograd's add_).
      const TensorId out = need_out(g, op, 0);
      need_in(g, op, 1);
      for (size_t i = 0; i < op.inputs.size(); ++i) {
        if (g.tensor(op.inputs[i]).shape != g.tensor(out).shape) fail(g, op, "gradients of different shapes");
        if (i == 0) continue;
        KernelStep s = step(KernelCall::ElementwiseBinary,
                            {{arg(g, i == 1 ? op.inputs[0] : out), arg(g, op.inputs[i])}, {arg(g, out)}},
                            numel(g.tensor(out)));
        s.fn = Pointwise::Add;
        kp.steps.push_back(s);
      }
      return;
    }
    case OpKind::Dropout: {
      // [x] -> [y, mask]: the kernel writes the mask (bool) it keeps for the backward.
      KernelStep s = step(KernelCall::ElementwiseUnary, {{arg(g, need_in(g, op, 0))}, args_of(g, op.outputs)},
                          numel(g.tensor(need_out(g, op, 0))));
      s.fn = Pointwise::Dropout;
      kp.steps.push_back(s);
      return;
    }
    case OpKind::DropoutBwd: {
      const Op& f = forward_of(g, op);
      const TensorId mask = f.outputs.size() > 1 && contains(op.inputs, f.outputs[1]) ? f.outputs[1] : kNoTensor;
      const TensorId dy = output_grad(g, op, f);
      const TensorId dx = need_out(g, op, 0);
      const Arg m = mask != kNoTensor ? arg(g, mask) : side(static_cast<uint64_t>(numel(g.tensor(dx))), DType::Bool);
      KernelStep s = step(KernelCall::ElementwiseUnaryBackward, {{m, arg(g, dy)}, {arg(g, dx)}}, numel(g.tensor(dx)));
      s.fn = Pointwise::Dropout;
      kp.steps.push_back(s);
      return;
    }
    case OpKind::ZeroGrad:
      // Zeroes every gradient it names (outputs, or inputs when the builder lists them there).
      for (TensorId id : op.outputs.empty() ? op.inputs : op.outputs) kp.steps.push_back(fill_zero(arg(g, id)));
      if (kp.steps.empty()) fail(g, op, "zero_grad names no tensor");
      return;
    case OpKind::Flatten: case OpKind::Reshape: case OpKind::Copy:
      // A distinct output tensor: its bytes are copied (a view would need no kernel, but then the graph would
      // not give it storage of its own), or cast when autocast changes the type. The backward of a Copy is a
      // Copy from the output's gradient to the input's.
      kp.steps.push_back(copy_or_cast(g, op, need_in(g, op, 0), need_out(g, op, 0)));
      return;
    case OpKind::Transpose: {
      // Forward and backward alike: the backward carries the inverse permutation in its own attrs.
      const TensorId x = need_in(g, op, 0), y = need_out(g, op, 0);
      KernelStep s = step(KernelCall::Gather, {{arg(g, x)}, {arg(g, y)}}, numel(g.tensor(y)));
      s.map_a = permute_map(g, op, g.tensor(x), g.tensor(y));
      kp.steps.push_back(s);
      return;
    }
    case OpKind::Pad: case OpKind::PadBwd: {
      const bool bwd = op.kind == OpKind::PadBwd;
      const Op& f = bwd ? forward_of(g, op) : op;
      const Tensor& x = g.tensor(need_in(g, f, 0));
      const Tensor& y = g.tensor(need_out(g, f, 0));
      const TensorId src = bwd ? output_grad(g, op, f) : x.id;
      const TensorId dst = bwd ? require(g, op, find_shaped(g, op.outputs, x.shape), "input gradient") : y.id;
      KernelStep s = step(KernelCall::Gather, {{arg(g, src)}, {arg(g, dst)}}, numel(g.tensor(dst)));
      s.map_a = pad_map(g, op, f, x, y, bwd);
      kp.steps.push_back(s);
      return;
    }
    case OpKind::Concat: case OpKind::ConcatBwd: plan_concat(g, op, kp); return;
    case OpKind::LayerNorm: case OpKind::LayerNormBwd: plan_layer_norm(g, op, kp); return;
    case OpKind::Embedding: case OpKind::EmbeddingBwd: {
      // [ids, table] -> [y]; backward [dy, ids] -> [dtable], a scatter-add into a zeroed table gradient.
      const Op& f = op.kind == OpKind::Embedding ? op : forward_of(g, op);
      const TensorId ids = need_in(g, f, 0), table = need_in(g, f, 1);
      if (g.tensor(ids).dtype != DType::I64) fail(g, f, "embedding indices must be int64");
      if (g.tensor(table).shape.size() != 2 || g.tensor(table).dtype != DType::F32)
        fail(g, f, "embedding table must be a 2-d fp32 tensor");
      KernelStep s;
      s.rows = numel(g.tensor(ids));
      s.cols = g.tensor(table).shape[1];
      if (op.kind == OpKind::Embedding) {
        s.call = KernelCall::EmbeddingForward;
        s.args = {{arg(g, ids), arg(g, table)}, {arg(g, need_out(g, op, 0))}};
      } else {
        const TensorId dy = output_grad(g, op, f);
        const TensorId dtable = require(g, op, find_shaped(g, op.outputs, g.tensor(table).shape), "table gradient");
        if (!contains(op.inputs, ids)) fail(g, op, "embedding backward does not keep its indices");
        kp.steps.push_back(fill_zero(arg(g, dtable)));  // the scatter accumulates, as PyTorch's does
        s.call = KernelCall::EmbeddingBackward;
        s.args = {{arg(g, ids), arg(g, dy)}, {arg(g, dtable)}};
      }
      kp.steps.push_back(s);
      return;
    }
    case OpKind::CrossEntropyLoss: case OpKind::CrossEntropyLossBwd: plan_cross_entropy(g, op, kp); return;
    case OpKind::SgdMomentumUpdate: case OpKind::AdamUpdate: {
      // Roles by tensor kind: the weight, its gradient and the optimizer state(s); updated in place.
      const TensorId w = require(g, op, first_of_kind(g, op.inputs, TensorKind::Weight), "weight");
      const TensorId gr = require(g, op, first_of_kind(g, op.inputs, TensorKind::Gradient), "gradient");
      const TensorId m = require(g, op, first_of_kind(g, op.inputs, TensorKind::OptimizerState), "optimizer state");
      for (TensorId id : {w, gr, m})
        if (g.tensor(id).dtype != DType::F32 || numel(g.tensor(id)) != numel(g.tensor(w)))
          fail(g, op, "optimizer tensors must be fp32 of the weight's size ('" + g.tensor(id).name + "')");
      KernelStep s = step(op.kind == OpKind::AdamUpdate ? KernelCall::Adam : KernelCall::SgdMomentum,
                          {{arg(g, w), arg(g, gr), arg(g, m)}, {}}, numel(g.tensor(w)));
      if (op.kind == OpKind::AdamUpdate)
        s.args.in.push_back(arg(g, require(g, op, first_of_kind(g, op.inputs, TensorKind::OptimizerState, 0, 1),
                                           "second moment")));
      kp.steps.push_back(s);
      return;
    }
    default:
      fail(g, op, std::string("no kernel for op kind ") + to_string(op.kind));
  }
}

// OpKind::Other, told apart by the attributes its builder sets (model_builder_extra.cc, cnn_cifar.cc,
// training.cc). A backward op (forward_op set) carries its forward's attributes too.
void plan_other(const Graph& g, const Op& op, KernelPlan& kp) {
  kp.lib = KernelLib::Ours;
  if (!op.outputs.empty()) kp.dtype = g.tensor(op.outputs[0]).dtype;
  const bool bwd = op.forward_op >= 0;
  if (op.attrs.get("reduce_broadcast") != 0) {  // Add's gradient for a broadcast operand: [dy] -> [dx]
    const TensorId dy = need_in(g, op, 0), dx = need_out(g, op, 0);
    KernelStep s = step(KernelCall::ReduceBroadcast, {{arg(g, dy)}, {arg(g, dx)}}, numel(g.tensor(dx)));
    s.map_a = reduce_map(g, op, g.tensor(dy).shape, g.tensor(dx).shape);
    kp.steps.push_back(s);
    return;
  }
  const Op& f = bwd ? forward_of(g, op) : op;
  const TensorId x = need_in(g, f, 0), y = need_out(g, f, 0);
  // The generic backward (training.cc): inputs [dy, x..., y], outputs [dx].
  const TensorId dy = bwd ? output_grad(g, op, f) : kNoTensor;
  const TensorId dx = bwd ? require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient") : kNoTensor;
  if (f.attrs.get("select") != 0) {
    // x.select(axis, index): `outer` rows of the inner block at `index` along the axis; a strided copy. Its
    // backward zeroes dx and copies dy into that slice.
    const Tensor& xt = g.tensor(x);
    const int64_t axis = attr(g, f, {"axis"}), index = attr(g, f, {"index"});
    if (axis < 0 || axis >= static_cast<int64_t>(xt.shape.size())) fail(g, f, "select axis out of range");
    const int64_t len = xt.shape[static_cast<size_t>(axis)];
    if (index < 0 || index >= len) fail(g, f, "select index out of range");
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= xt.shape[static_cast<size_t>(i)];
    const int64_t inner = static_cast<int64_t>(xt.bytes) / (outer * len);  // bytes of one slice row
    if (g.tensor(y).bytes != static_cast<uint64_t>(outer * inner)) fail(g, f, "select output size does not match");
    KernelStep c = step(KernelCall::Copy, {});
    c.rows = outer, c.cols = inner;
    if (!bwd) {
      c.args = {{arg(g, x)}, {arg(g, y)}};
      c.src_offset = index * inner, c.src_pitch = len * inner, c.dst_pitch = inner;
    } else {
      kp.steps.push_back(fill_zero(arg(g, dx)));
      c.args = {{arg(g, dy)}, {arg(g, dx)}};
      c.src_pitch = inner, c.dst_offset = index * inner, c.dst_pitch = len * inner;
    }
    kp.steps.push_back(c);
    return;
  }
  if (f.attrs.get("tanh") != 0) {  // y = tanh(x); dx = dy * (1 - y^2) from the saved output
    if (!bwd) {
      KernelStep s = step(KernelCall::ElementwiseUnary, {{arg(g, x)}, {arg(g, y)}}, numel(g.tensor(y)));
      s.fn = Pointwise::Tanh;
      kp.steps.push_back(s);
    } else {
      if (!contains(op.inputs, y)) fail(g, op, "tanh backward does not keep the forward's output");
      KernelStep s = step(KernelCall::ElementwiseUnaryBackward, {{arg(g, y), arg(g, dy)}, {arg(g, dx)}}, numel(g.tensor(dx)));
      s.fn = Pointwise::Tanh;
      kp.steps.push_back(s);
    }
    return;
  }
  if (f.attrs.get("lrn") != 0) {  // cuDNN's cross-channel LRN over `lrn_size` channels
    kp.lib = KernelLib::Cudnn;
    kp.lrn_size = attr(g, f, {"lrn_size"});
    if (kp.lrn_size < 1 || kp.lrn_size > 16) fail(g, f, "LRN size must be 1..16 (cuDNN's lrnN range)");
    if (g.tensor(x).shape.size() != 4) fail(g, f, "LRN input must be NCHW");
    kp.x_dims = g.tensor(x).shape;
    kp.y_dims = kp.x_dims;
    if (!bwd) {
      kp.dtype = same_dtype(g, op, {x, y});
      add_step(kp, KernelCall::LrnForward, {{arg(g, x)}, {arg(g, y)}});
    } else {
      if (!contains(op.inputs, x) || !contains(op.inputs, y)) fail(g, op, "LRN backward needs the forward's x and y");
      kp.dtype = same_dtype(g, op, {x, y, dy, dx});
      add_step(kp, KernelCall::LrnBackward, {{arg(g, y), arg(g, dy), arg(g, x)}, {arg(g, dx)}});
    }
    return;
  }
  fail(g, op, "an Other op without a known kind attribute (select, tanh, lrn, reduce_broadcast)");
}

}  // namespace dlsim::plan_detail
