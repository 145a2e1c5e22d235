#include "policies/swap/offload/zero_offload_swap.h"

#include "common/config_error.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/core/host_step.h"

namespace dlsim {

namespace {

// Both policies combine with per-block activation checkpointing the same way.
// checkpoint_every, a parameter of both policies.
template <class O>
ParamBindings<O> checkpoint_every_parameter() {
  return ParamBindings<O>().add("checkpoint_every", &O::checkpoint_every,
                                "also checkpoint activations every K blocks as `checkpoint` does; 0: no checkpointing",
                                ParamCheck::at_least(0));
}

}  // namespace

const ParamBindings<ZeroOffloadOptions>& ZeroOffloadOptions::parameters() {
  using O = ZeroOffloadOptions;
  static const auto b = ParamBindings<O>()
      .add("delayed_update", &O::delayed_update,
           "one-step delayed parameter update (DPU): the CPU step overlaps the next iteration, whose passes use "
           "weights one step older")
      .add_all(checkpoint_every_parameter<O>());
  return b;
}

namespace {

// The plan both policies start from: checkpointing every K blocks when asked, and every optimizer op on the CPU.
// FSDP's parameters (param-offload) are views of its flat parameter, whose casts autocast does not cache.
SwapPlan host_step_plan(const SwapContext& ctx, int64_t checkpoint_every, const std::string& policy) {
  const Graph& g = ctx.graph;
  SwapPlan plan;
  if (checkpoint_every > 0) {
    CheckpointOptions c;
    c.every = checkpoint_every;
    plan = checkpoint_plan(g, ctx.schedule.order, checkpoint_segments(g, c), policy != "param-offload");
  }
  for (OpId id : ctx.schedule.order) {
    const Op& op = g.op(id);
    if (op.kind == OpKind::AdamUpdate || op.kind == OpKind::SgdMomentumUpdate) plan.host_step.ops.push_back(id);
  }
  if (plan.host_step.empty())
    throw ConfigError("", 0, "swap", policy + ": model '" + g.name + "' has no optimizer step to run on the CPU");
  return plan;
}

nlohmann::json host_step_report(const Graph& g, const SwapPlan& plan, const HostStepTensors& h) {
  uint64_t grads = 0, weights = 0, state_on_host = 0;
  for (TensorId t : h.to_host) grads += g.tensor(t).bytes;
  for (TensorId t : h.written_back) weights += g.tensor(t).bytes;
  for (const Tensor& t : g.tensors())
    if (h.host_only[static_cast<size_t>(t.id)]) state_on_host += t.bytes;
  return {{"host_ops", plan.host_step.ops.size()},
          {"parameters", h.parameters},
          {"gradient_bytes_to_host", grads},
          {"weight_bytes_from_host", weights},
          {"device_state_bytes_moved", state_on_host},
          {"host_state_bytes", h.host_state_bytes},
          {"host_update_bytes", h.host_update_bytes},
          {"checkpointed_segments", plan.recomputations.size()}};
}

}  // namespace

const ParamBindings<ParamOffloadOptions>& ParamOffloadOptions::parameters() {
  using O = ParamOffloadOptions;
  static const auto b = ParamBindings<O>()
      .add("prefetch_ops", &O::prefetch_ops,
           "issue each parameter's copy to the device this many ops ahead of its first use (0: right before it)",
           ParamCheck::in_range(0, 1000000))
      .add("cpu_optimizer", &O::cpu_optimizer,
           "the optimizer FSDP runs on the CPU: torch (PyTorch's CPU Adam, 8.2/56 of the hardware file's rate) or "
           "deepspeed (DeepSpeedCPUAdam, the hardware file's host_cpu.adam_gb_per_s)",
           ParamCheck::one_of({"torch", "deepspeed"}))
      .add_all(checkpoint_every_parameter<O>());
  return b;
}

SwapResult ParamOffloadSwap::plan(const SwapContext& ctx) {
  SwapResult out;
  out.plan = host_step_plan(ctx, o_.checkpoint_every, "param-offload");
  out.plan.host_step.fetch_parameters = true;
  out.plan.host_step.prefetch_ops = static_cast<int>(o_.prefetch_ops);
  out.plan.host_step.cpu_rate_scale = o_.cpu_optimizer == "torch" ? kTorchCpuAdamRateScale : 1.0;
  const HostStepTensors h = host_step_tensors(ctx.graph, ctx.schedule.order, out.plan.host_step);
  out.report = host_step_report(ctx.graph, out.plan, h);
  out.report["fetches"] = parameter_fetches(ctx.graph, ctx.schedule.order, out.plan, h).size();
  out.report["cpu_optimizer"] = o_.cpu_optimizer;
  return out;
}

SwapResult ZeroOffloadSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  SwapResult out;
  out.plan = host_step_plan(ctx, o_.checkpoint_every, "zero-offload");
  out.plan.host_step.delayed_update = o_.delayed_update;
  const HostStepTensors h = host_step_tensors(g, ctx.schedule.order, out.plan.host_step);
  out.report = host_step_report(g, out.plan, h);
  out.report["delayed_update"] = o_.delayed_update;
  return out;
}

}  // namespace dlsim
