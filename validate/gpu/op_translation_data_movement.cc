// The translation plan's data movement on our kernels or plain copies: copies and casts (Flatten, Reshape,
// Copy), permutations as gathers, padding and cropping, concatenation and its backward; and the map that sums a
// broadcast operand's gradient down to its shape (used by op_translation_other.cc).
#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {
namespace {

// Permutation (attribute perm: output axis i is input axis perm_i) as a gather. Training graphs elide
// views, so one side may be the unviewed tensor (a head split permutes the [B, S, heads, d] view of a
// [B, S, H] tensor): the side whose rank is the permutation's gives the shapes, the other must match in size.
NdMap permute_map(const Graph& g, const Op& op, const Tensor& x, const Tensor& y) {
  const std::vector<int64_t> perm = op.attr_list(Attr::perm);
  const size_t r = perm.size();
  if (r == 0 || r > kMaxRank) fail(g, op, "transpose needs attributes perm0..perm{rank-1} (rank at most 6)");
  std::vector<bool> seen(r, false);
  for (size_t i = 0; i < r; ++i) {
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
    const int64_t begin = attr(g, fwd, Attr::pad_begin, i);
    const int64_t end = attr(g, fwd, Attr::pad_end, i);
    if (x.shape[i] + begin + end != y.shape[i]) fail(g, fwd, "output shape is not the input padded by pad_begin/pad_end");
    m.dims.push_back(dst.shape[i]);
    m.strides.push_back(st[i]);
    m.shift.push_back(inverse ? -begin : begin);
    m.bound.push_back(src.shape[i]);
  }
  return m;
}

void translate_concat(const Graph& g, const Op& op, OpTranslation& kp) {
  // Concat along `axis` of contiguous tensors: each part is `outer` rows of (its inner bytes), placed at a
  // column offset in rows of the whole's inner bytes. ConcatBwd copies the parts back out.
  const bool fwd = op.kind == OpKind::Concat;
  const Op& f = fwd ? op : forward_of(g, op);
  const Tensor& whole = g.tensor(need_out(g, f, 0));
  int64_t axis = attr(g, f, Attr::axis);
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

void translate_data_movement(const Graph& g, const Op& op, OpTranslation& kp) {
  start_ours(g, op, kp);
  switch (op.kind) {
    case OpKind::Flatten: case OpKind::Reshape: case OpKind::Copy:
      // A distinct output tensor: its bytes are copied (a view would need no kernel, but then the graph would
      // not give it storage of its own), or cast when autocast changes the type. The backward of a Copy is a
      // Copy from the output's gradient to the input's.
      kp.steps.push_back(copy_or_cast(g, op, need_in(g, op, 0), need_out(g, op, 0)));
      return;
    case OpKind::Transpose: {
      // Forward and backward alike: the backward carries the inverse permutation as its own perm.
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
    case OpKind::Concat: case OpKind::ConcatBwd: translate_concat(g, op, kp); return;
    default:
      fail(g, op, std::string("not a data-movement op: ") + to_string(op.kind));
  }
}

}  // namespace dlsim::validate_internal
