// The optimizer step of the training synthesis (internal/training_synthesizer.h): one update per parameter, or
// one multi-tensor update over all of them (Kernels::Fused), after AMP's unscale of the gradients (mixed-fp16).
#include "workloads/internal/training_synthesizer.h"

namespace dlsim::workloads_internal {

// GradScaler's unscale before the step (_amp_foreach_non_finite_check_and_unscale_): one multi-tensor kernel
// that multiplies every weight gradient by 1/scale in place and checks it for inf/NaN.
void Synthesizer::unscale_gradients() {
  Op o;
  o.name = "amp.unscale";
  o.kind = OpKind::Other;
  o.phase = Phase::Optimizer;
  for (size_t w = 0; w < learnable_.size(); ++w) {
    const TensorId gw = learnable_[w] ? grad_[w] : kNoTensor;
    if (gw == kNoTensor) continue;
    o.inputs.push_back(gw);
    o.outputs.push_back(gw);
    o.bytes_read += g_.tensor(gw).bytes;
    o.bytes_written += g_.tensor(gw).bytes;
    o.flops += static_cast<double>(numel(g_.tensor(gw).shape));
  }
  if (o.inputs.empty()) return;
  o.other = OtherOp::AmpUnscale;
  g_.add_op(std::move(o));
}

void Synthesizer::optimizer() {
  if (opts_.precision == Precision::MixedFP16) unscale_gradients();
  // Kernels::Fused: apex's FusedAdam / FusedSGD (multi_tensor_apply): one op updates every parameter, and Adam
  // keeps no per-parameter denominator.
  const bool fused = opts_.kernels == Kernels::Fused;
  Op step;
  step.name = opts_.optimizer == Optimizer::SgdMomentum ? "optimizer.fused_sgd"
              : opts_.optimizer == Optimizer::AdamW     ? "optimizer.fused_adamw"
                                                        : "optimizer.fused_adam";
  const bool adamw = opts_.optimizer == Optimizer::AdamW;
  const double adam_flops = adamw ? 14 : 12;  // AdamW: the decay's multiply (2 per element with the lr product)
  step.kind = opts_.optimizer == Optimizer::SgdMomentum ? OpKind::SgdMomentumUpdate : OpKind::AdamUpdate;
  step.phase = Phase::Optimizer;
  Op none;
  for (size_t w = 0; w < learnable_.size(); ++w) {
    if (!learnable_[w]) continue;
    TensorId gw = grad_[w];
    if (gw == kNoTensor) continue;  // no gradient reached it: the optimizer skips it (p.grad is None)
    const Tensor wt = g_.tensor(static_cast<TensorId>(w));
    double n = static_cast<double>(numel(wt.shape));
    // State in the parameter's dtype (torch.zeros_like(p)): fp32 beside fp32 masters, bf16 for a bf16 model.
    auto state = [&](const std::string& suffix) {
      Tensor t;
      t.name = wt.name + suffix;
      t.kind = TensorKind::OptimizerState;
      t.dtype = wt.dtype;
      t.shape = wt.shape;
      t.bytes = wt.bytes;
      t.persistent = true;
      return add(std::move(t));
    };
    none.name = wt.name;
    TensorId wid = static_cast<TensorId>(w);
    if (fused) {
      std::vector<TensorId> in = {wid, gw}, out = {wid};
      const int n_state = opts_.optimizer == Optimizer::SgdMomentum ? 1 : 2;
      for (int k = 0; k < n_state; ++k) {
        const TensorId st = state(n_state == 1 ? ".momentum_buffer" : (k == 0 ? ".exp_avg" : ".exp_avg_sq"));
        in.push_back(st);
        out.push_back(st);
      }
      for (TensorId t : in) step.inputs.push_back(t), step.bytes_read += g_.tensor(t).bytes;
      for (TensorId t : out) step.outputs.push_back(t), step.bytes_written += g_.tensor(t).bytes;
      step.flops += (n_state == 1 ? 4 : adam_flops) * n;
      continue;
    }
    if (opts_.optimizer == Optimizer::SgdMomentum) {
      // buf.mul_(momentum).add_(grad); p.add_(buf, alpha=-lr)
      TensorId m = state(".momentum_buffer");
      emit(none, OpKind::SgdMomentumUpdate, ".sgd", {wid, gw, m}, {wid, m}, 4 * n, kNoTensor, Phase::Optimizer);
    } else {
      // PyTorch 1.13's single-tensor Adam allocates denom = exp_avg_sq.sqrt() / bc2 + eps per parameter
      // each step: modelled as the op's workspace.
      TensorId m = state(".exp_avg"), v = state(".exp_avg_sq");
      Tensor d;
      d.name = wt.name + ".adam_denom";
      d.kind = TensorKind::Workspace;
      d.dtype = wt.dtype;
      d.shape = wt.shape;
      d.bytes = wt.bytes;
      TensorId denom = add(std::move(d));
      const OpId step_id = emit(none, OpKind::AdamUpdate, adamw ? ".adamw" : ".adam", {wid, gw, m, v}, {wid, m, v},
                                adam_flops * n, denom, Phase::Optimizer);
      if (adamw) g_.op(step_id).set_attr(Attr::adamw, 1);
    }
  }
  if (fused && !step.inputs.empty()) {
    step.set_attr(Attr::multi_tensor, 1);
    if (adamw) step.set_attr(Attr::adamw, 1);
    g_.add_op(std::move(step));
  }
}

}  // namespace dlsim::workloads_internal
