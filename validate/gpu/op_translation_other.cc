// The translation plan's OpKind::Other ops, told apart by their sub-kind (workloads/op_kind.h): select, tanh,
// cuDNN's LRN, and the reduction of a broadcast operand's gradient.
#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {

// A backward op (forward_op set) carries its forward's sub-kind and attributes.
void translate_other(const Graph& g, const Op& op, OpTranslation& kp) {
  kp.lib = KernelLib::Ours;
  if (!op.outputs.empty()) kp.dtype = g.tensor(op.outputs[0]).dtype;
  const bool bwd = op.forward_op >= 0;
  if (op.other == OtherOp::ReduceBroadcast) {  // Add's gradient for a broadcast operand: [dy] -> [dx]
    const TensorId dy = need_in(g, op, 0), dx = need_out(g, op, 0);
    KernelStep s = step(KernelCall::ReduceBroadcast, {{arg(g, dy)}, {arg(g, dx)}}, numel(g.tensor(dx)));
    s.map_a = reduce_map(g, op, g.tensor(dy).shape, g.tensor(dx).shape);
    kp.steps.push_back(s);
    return;
  }
  const Op& f = bwd ? forward_of(g, op) : op;
  const TensorId x = need_in(g, f, 0), y = need_out(g, f, 0);
  // The generic backward (training_backward.cc): inputs [dy, x..., y], outputs [dx].
  const TensorId dy = bwd ? output_grad(g, op, f) : kNoTensor;
  const TensorId dx = bwd ? require(g, op, find_shaped(g, op.outputs, g.tensor(x).shape), "input gradient") : kNoTensor;
  if (f.other == OtherOp::Select) {
    // x.select(axis, index): `outer` rows of the inner block at `index` along the axis; a strided copy. Its
    // backward zeroes dx and copies dy into that slice.
    const Tensor& xt = g.tensor(x);
    const int64_t axis = attr(g, f, Attr::axis), index = attr(g, f, Attr::index);
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
  if (f.other == OtherOp::Tanh) {  // y = tanh(x); dx = dy * (1 - y^2) from the saved output
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
  if (f.other == OtherOp::Lrn) {  // cuDNN's cross-channel LRN over `lrn_size` channels
    kp.lib = KernelLib::Cudnn;
    kp.lrn_size = attr(g, f, Attr::lrn_size);
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
  fail(g, op, std::string("an Other op of a sub-kind the harness has no kernel for (") + to_string(f.other) +
                  "; it runs select, tanh, lrn and reduce_broadcast)");
}

}  // namespace dlsim::validate_internal
