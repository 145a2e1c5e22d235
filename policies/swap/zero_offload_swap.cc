#include "policies/swap/zero_offload_swap.h"

#include "common/config_error.h"
#include "policies/swap/checkpoint_swap.h"
#include "policies/swap/host_step.h"

namespace dlsim {

std::vector<ParamSpec> ZeroOffloadOptions::specs() {
  return {{"delayed_update", ParamType::Bool, false,
           "one-step delayed parameter update (DPU): the CPU step overlaps the next iteration, whose passes use "
           "weights one step older"},
          {"checkpoint_every", ParamType::Int, int64_t{0},
           "also checkpoint activations every K blocks as `checkpoint` does; 0: no checkpointing",
           ParamCheck::at_least(0)}};
}

ZeroOffloadOptions ZeroOffloadOptions::from_params(const Params& p) {
  ZeroOffloadOptions o;
  o.delayed_update = p.get_bool("delayed_update");
  o.checkpoint_every = p.get_int("checkpoint_every");
  return o;
}

SwapResult ZeroOffloadSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  SwapResult out;
  if (o_.checkpoint_every > 0) {
    CheckpointOptions c;
    c.every = o_.checkpoint_every;
    out.plan = checkpoint_plan(g, ctx.schedule.order, checkpoint_segments(g, c));
  }
  for (OpId id : ctx.schedule.order) {
    const Op& op = g.op(id);
    if (op.kind == OpKind::AdamUpdate || op.kind == OpKind::SgdMomentumUpdate) out.plan.host_step.ops.push_back(id);
  }
  if (out.plan.host_step.empty())
    throw ConfigError("", 0, "swap", "zero-offload: model '" + g.name + "' has no optimizer step to run on the CPU");
  out.plan.host_step.delayed_update = o_.delayed_update;
  const HostStepTensors h = host_step_tensors(g, ctx.schedule.order, out.plan.host_step);
  uint64_t grads = 0, weights = 0, state_on_host = 0;
  for (TensorId t : h.to_host) grads += g.tensor(t).bytes;
  for (TensorId t : h.written_back) weights += g.tensor(t).bytes;
  for (const Tensor& t : g.tensors())
    if (h.host_only[static_cast<size_t>(t.id)]) state_on_host += t.bytes;
  out.report = {{"host_ops", out.plan.host_step.ops.size()},
                {"parameters", h.parameters},
                {"gradient_bytes_to_host", grads},
                {"weight_bytes_from_host", weights},
                {"device_state_bytes_moved", state_on_host},
                {"host_state_bytes", h.host_state_bytes},
                {"host_update_bytes", h.host_update_bytes},
                {"delayed_update", o_.delayed_update},
                {"checkpointed_segments", out.plan.recomputations.size()}};
  return out;
}

}  // namespace dlsim
