// The optimizer step of the training synthesis (internal/training_synthesizer.h): one update per parameter, or
// one multi-tensor update over all of them (Kernels::Fused), after AMP's unscale of the gradients (mixed-fp16).
//
// Kernels::Eager is what torch.optim does on a GPU by default since PyTorch 2.0: the foreach implementation
// (_multi_tensor_adam, _multi_tensor_sgd). It groups the parameters that have a gradient by device and dtype and
// runs each step as a few multi-tensor kernels over a group. What that allocates:
//   - Adam and AdamW: torch._foreach_sqrt(exp_avg_sqs) makes a new tensor per parameter of the group (the
//     denominator, then divided and offset in place and read by the final addcdiv_), alive from the sqrt to the
//     end of the group's step; every gradient is alive too (in .grad until zero_grad). The moments' updates
//     (lerp_, mul_, addcmul_) and AdamW's decay (mul_ on the parameters) are in place; the step counts live on the
//     host. Adam's L2 weight decay would add a copy of the gradients (_foreach_add), but dlsim's Adam has none
//     (torch.optim.Adam's default weight_decay=0).
//   - SGD with momentum (no nesterov or maximize): buffers and parameters in place; with weight decay
//     (TrainingOptions::weight_decay), _foreach_add(grads, params, alpha=weight_decay) makes a new tensor per
//     parameter of the group (the decayed gradient, read by the momentum's add_), alive to the end of the group's
//     step: each a tensor of its own, made by the group's first update and read by its own, as Adam's sqrt
//     temporaries below. Without decay no temporary.
// The foreach SGD step's kernels (torch/optim/sgd.py's _multi_tensor_sgd, momentum): with weight decay first
// _foreach_add(grads, params, alpha=wd) (three lists: two read, one written), then _foreach_mul_(bufs, momentum)
// (one list, each element read and written), _foreach_add_(bufs, grads) and _foreach_add_(params, bufs,
// alpha=-lr) (two lists, two reads and a write): three passes, 8 tensors of a parameter's size moved (four and 11
// with decay). The zoo keeps one SgdMomentumUpdate per parameter (its bytes are the one fused kernel's,
// 3 reads and 2 writes, what the roofline prices it by as before, and its signature), with the passes' traffic over
// the parameter (attr foreach_bytes) and the launches of multi_tensor_apply's rule (workloads/multi_tensor_apply.h)
// its tensor closes in each pass, with their largest chunks' bytes (launches, chunk_bytes): the ops of a group sum
// to the passes' launches, which a hardware file's multi_tensor class prices (hw/fitted/multi_tensor.h). The GPU
// harness runs one fused kernel per update op whatever these say (they are pricing, not the op's computation:
// op signatures leave them out).
// The foreach step's kernels (torch/optim/adam.py's _multi_tensor_adam, capturable=False, the default; AdamW is
// Adam with decoupled decay): the step counts are host tensors (no kernel), the bias corrections host floats; on
// the device _foreach_mul_(params, 1 - lr * wd) (AdamW only), _foreach_lerp_(exp_avgs, grads, 1 - beta1),
// _foreach_mul_(exp_avg_sqs, beta2), _foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2), denom =
// _foreach_sqrt(exp_avg_sqs), _foreach_div_(denom, bias_correction2_sqrt), _foreach_add_(denom, eps),
// _foreach_addcdiv_(params, exp_avgs, denom, step_size): eight passes (Adam seven) that read 12 (11) and write 8
// (7) tensors of a parameter's size, each parameter's share of which is its AdamUpdate's bytes here (a fused
// AdamW reads 4 and writes 3). Each pass is multi_tensor_apply's launches (ATen/native/cuda/MultiTensorApply.cuh):
// the tensors cut into 65,536-element chunks, a launch when 320 chunks or the depth's tensor limit (110, 64, 48, 36
// for 1-4 lists; 96 with a scalar list) are reached: for Qwen2.5-0.5B's 290 tensors (494 M elements) 25 launches a
// pass, 200 a step, for GPT-2's 148 (124 M) 7 and 56, as the profiled H200 steps run
// (results/fidelity/data/h200-2026-11-28/traces.tar). The zoo's op count is the parameters' (290, and 196 for its
// GPT-2 with q, k and v apart), not the launches': the kernels' fixed costs differ by the difference.
// The zoo keeps one AdamUpdate per parameter (what zero-offload and param-offload move to the CPU, what
// optimizer-overlap moves into backward), marked foreach (attr): the GPU harness runs one fused kernel per update
// op instead, so the plans it runs are made with EagerAdam::PerParameter (training_options.h): 4 reads, 3 writes,
// no temporary. Each parameter's sqrt temporary is a tensor of
// its own (TensorKind::Workspace): the group's first update writes all of them, in the parameters' order, and each
// update reads its own, after which it is freed. So at the group's first update every temporary is alive beside
// every gradient, which is the foreach step's peak, and the caching allocator sees what PyTorch asks of it: one
// request per parameter, which fits blocks the forward and backward freed (one request of the whole group's size,
// as the zoo made before, fits none of them: a 4,716 MiB cudaMalloc for Llama 3.2 1B, +11 % reserved against the
// measured step). (In PyTorch the temporaries stay allocated until the group's step returns and the gradients
// until zero_grad; here each is freed after its own update. Nothing is allocated in between, so the peak is the
// same.) Every update of a group now depends on its first, as every addcdiv_ follows the sqrt (an
// optimizer-overlap schedule of eager Adam waits for the first parameter's gradient). Under zero-offload the
// updates and their temporaries are host memory (policies/swap/core/host_step.h).
#include "workloads/internal/training_synthesizer.h"

#include <map>

#include "workloads/multi_tensor_apply.h"

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

// The foreach SGD passes over one dtype group's parameters (above): each update op charged the passes' traffic over
// its parameter and the launches its tensor closes.
void Synthesizer::charge_foreach_sgd(DType dtype, const std::vector<std::pair<OpId, int64_t>>& updates) {
  struct Pass {
    int lists;
    int64_t moved;  // tensors of the parameter's size each element moves, read and written
  };
  // add(grads, params) with weight decay; mul_(bufs), add_(bufs, grads), add_(params, bufs)
  static constexpr Pass kDecay{3, 3};
  static constexpr Pass kPasses[] = {{1, 2}, {2, 3}, {2, 3}};
  const int64_t eb = static_cast<int64_t>(dtype_bytes(dtype));
  std::vector<int64_t> numels;
  for (const auto& u : updates) numels.push_back(u.second);
  std::vector<int64_t> launches(updates.size(), 0), chunk_bytes(updates.size(), 0);
  int64_t moved = 0;
  std::vector<Pass> passes(std::begin(kPasses), std::end(kPasses));
  if (opts_.weight_decay > 0) passes.insert(passes.begin(), kDecay);
  for (const Pass& p : passes) {
    moved += p.moved;
    const std::vector<MultiTensorCharge> c = multi_tensor_charges(numels, p.lists, p.moved * eb);
    for (size_t i = 0; i < c.size(); ++i) launches[i] += c[i].launches, chunk_bytes[i] += c[i].chunk_bytes;
  }
  for (size_t i = 0; i < updates.size(); ++i) {
    Op& u = g_.op(updates[i].first);
    u.set_attr(Attr::foreach_bytes, updates[i].second * moved * eb);
    u.set_attr(Attr::launches, launches[i]);
    u.set_attr(Attr::chunk_bytes, chunk_bytes[i]);
  }
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
  // Eager Adam: _foreach_sqrt's outputs, one tensor per parameter with a gradient, by dtype group (below); eager
  // SGD with weight decay: _foreach_add's decayed gradients, alike.
  std::map<DType, std::vector<TensorId>> group_temporaries;
  std::map<DType, OpId> group_first_update;
  // Eager SGD: each dtype group's updates and their parameters' elements, in the parameters' order.
  std::map<DType, std::vector<std::pair<OpId, int64_t>>> sgd_groups;
  Op none;
  for (size_t w = 0; w < learnable_.size(); ++w) {
    if (!learnable_[w]) continue;
    TensorId gw = grad_[w];
    if (gw == kNoTensor) continue;  // no gradient reached it: the optimizer skips it (p.grad is None)
    const Tensor wt = g_.tensor(static_cast<TensorId>(w));
    double n = static_cast<double>(numel(wt.shape));
    // State in the parameter's dtype (torch.zeros_like(p)): fp32 beside fp32 masters, bf16 for a bf16 model.
    auto state = [&](const std::string& suffix) {
      return tensor_like(static_cast<TensorId>(w), wt.name + suffix, TensorKind::OptimizerState, true);
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
      const OpId id =
          emit(none, OpKind::SgdMomentumUpdate, ".sgd", {wid, gw, m}, {wid, m}, 4 * n, kNoTensor, Phase::Optimizer);
      sgd_groups[wt.dtype].emplace_back(id, numel(wt.shape));
      if (opts_.weight_decay > 0) {
        // This parameter's decayed gradient: the group's first update makes it (below), its own reads it (the
        // update's bytes stay the fused kernel's; the passes' traffic is its foreach_bytes).
        const TensorId d = tensor_like(wid, wt.name + ".foreach_decay", TensorKind::Workspace);
        group_temporaries[wt.dtype].push_back(d);
        group_first_update.emplace(wt.dtype, id);
        g_.op(id).inputs.push_back(d);
      }
    } else {
      TensorId m = state(".exp_avg"), v = state(".exp_avg_sq");
      const OpId step_id = emit(none, OpKind::AdamUpdate, adamw ? ".adamw" : ".adam", {wid, gw, m, v}, {wid, m, v},
                                adam_flops * n, kNoTensor, Phase::Optimizer);
      if (adamw) g_.op(step_id).set_attr(Attr::adamw, 1);
      // EagerAdam::PerParameter: one fused kernel, the bytes emit gave (weight, gradient and moments read once,
      // weight and moments written once), no temporary: what the GPU harness runs for this op.
      if (opts_.eager_adam == EagerAdam::PerParameter) continue;
      {
        Op& u = g_.op(step_id);
        u.set_attr(Attr::foreach, 1);
        // the foreach passes' traffic over this parameter (above); gradient, states and temporary in its dtype
        u.bytes_read = (adamw ? uint64_t{12} : uint64_t{11}) * wt.bytes;
        u.bytes_written = (adamw ? uint64_t{8} : uint64_t{7}) * wt.bytes;
      }
      // The foreach step's sqrt of this parameter's second moment. The group's first update makes it (below); its
      // own update reads it, appended after emit (its bytes are in the traffic set above).
      const TensorId sq = tensor_like(static_cast<TensorId>(w), wt.name + ".foreach_sqrt", TensorKind::Workspace);
      group_temporaries[wt.dtype].push_back(sq);
      group_first_update.emplace(wt.dtype, step_id);
      g_.op(step_id).inputs.push_back(sq);
    }
  }
  // The group's first update writes every temporary of its group: _foreach_sqrt (_foreach_add) allocates them all,
  // in the parameters' order, before any parameter's addcdiv_ (momentum).
  for (const auto& [dtype, temporaries] : group_temporaries) {
    Op& first = g_.op(group_first_update.at(dtype));
    first.outputs.insert(first.outputs.end(), temporaries.begin(), temporaries.end());
  }
  for (const auto& [dtype, updates] : sgd_groups) charge_foreach_sgd(dtype, updates);
  if (fused && !step.inputs.empty()) {
    step.set_attr(Attr::multi_tensor, 1);
    if (adamw) step.set_attr(Attr::adamw, 1);
    g_.add_op(std::move(step));
  }
}

}  // namespace dlsim::workloads_internal
