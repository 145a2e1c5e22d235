// The translation plan's element-wise ops on our kernels (validate/gpu/cuda/kernels.cu): broadcast add and multiply
// and the multiply's gradient, gradient sums, dropout and its backward, zeroing gradients, optimizer updates.
#include "validate/gpu/internal/op_translation_helpers.h"

namespace dlsim::validate_internal {
namespace {

void translate_binary(const Graph& g, const Op& op, OpTranslation& kp) {
  const TensorId a = need_in(g, op, 0), b = need_in(g, op, 1), y = need_out(g, op, 0);
  KernelStep s = step(KernelCall::ElementwiseBinary, {{arg(g, a), arg(g, b)}, {arg(g, y)}}, numel(g.tensor(y)));
  s.fn = op.kind == OpKind::Add ? Pointwise::Add : Pointwise::Mul;
  s.map_a = broadcast_map(g, op, g.tensor(a).shape, g.tensor(y).shape);
  s.map_b = broadcast_map(g, op, g.tensor(b).shape, g.tensor(y).shape);
  kp.steps.push_back(s);
}

// d(a*b): da = dy * b, db = dy * a, each summed down to its operand's shape when it was broadcast.
// training.cc: inputs [dy, (b if da), (a if db)], outputs [(da), (db)].
void translate_mul_backward(const Graph& g, const Op& op, OpTranslation& kp) {
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

}  // namespace

void translate_elementwise(const Graph& g, const Op& op, OpTranslation& kp) {
  start_ours(g, op, kp);
  switch (op.kind) {
    case OpKind::Add: case OpKind::Mul: translate_binary(g, op, kp); return;
    case OpKind::MulBwd: translate_mul_backward(g, op, kp); return;
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
    case OpKind::SgdMomentumUpdate: case OpKind::AdamUpdate: {
      // One fused kernel per update. PyTorch's foreach passes (attr foreach) move 20 tensors' bytes where it moves
      // 7, and their sqrt temporaries would be allocated for nothing: such a plan is not what the harness runs.
      if (op.kind == OpKind::AdamUpdate && op.attr(Attr::foreach) != 0)
        fail(g, op, "a foreach Adam update (torch.optim's passes) is not the harness's one fused kernel; dlsim "
                    "validate writes plans of fused updates (EagerAdam::PerParameter)");
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
      fail(g, op, std::string("not an element-wise op: ") + to_string(op.kind));
  }
}

}  // namespace dlsim::validate_internal
