#include "policies/swap/vdnn/vdnn_swap.h"

#include <algorithm>

#include "policies/swap/core/program_load.h"

namespace dlsim {

const ParamBindings<VdnnOptions>& VdnnOptions::parameters() {
  static const auto b = ParamBindings<VdnnOptions>().add_choice(
      "policy", &VdnnOptions::conv_only, ParamChoices<bool>{{"all", false}, {"conv", true}},
      "all (vDNN_all: every layer's input feature maps) or conv (vDNN_conv: convolution inputs only)");
  return b;
}

SwapResult VdnnSwap::plan(const SwapContext& ctx) {
  const Graph& g = ctx.graph;
  const std::vector<OpId>& order = ctx.schedule.order;
  const int n = static_cast<int>(order.size());
  const ProgramLoad load(g, order);
  auto op_at = [&](int pos) -> const Op& { return g.op(order[static_cast<size_t>(pos)]); };

  // For each position, the first position of the layer before its own: a layer is one forward op, or the run
  // of backward ops of one forward op.
  std::vector<int> prev_layer_start(static_cast<size_t>(n), 0);
  for (int p = 0, start = 0, prev = 0; p < n; ++p) {
    const bool same = p > 0 && op_at(p).phase != Phase::Forward && op_at(p).forward_op == op_at(p - 1).forward_op;
    if (p > 0 && !same) {
      prev = start;
      start = p;
    }
    prev_layer_start[static_cast<size_t>(p)] = prev;
  }

  SwapResult out;
  std::vector<uint8_t> done(g.tensors().size(), 0);
  int offloaded_layers = 0;
  for (int p = 0; p < n; ++p) {
    const Op& layer = op_at(p);
    if (layer.phase != Phase::Forward || (o_.conv_only && layer.kind != OpKind::Conv2d)) continue;
    bool any = false;
    for (TensorId x : layer.inputs) {
      const Tensor& t = g.tensor(x);
      if (t.persistent || done[static_cast<size_t>(x)] || t.kind == TensorKind::Gradient) continue;
      const auto& uses = load.uses(x);
      int last_fwd = -1, first_bwd = -1;
      for (int u : uses) {
        if (op_at(u).phase == Phase::Forward) last_fwd = u;
        else if (first_bwd < 0) first_bwd = u;
      }
      if (first_bwd < 0 || last_fwd < 0) continue;  // no backward reader: the graph frees it already
      done[static_cast<size_t>(x)] = 1;
      SwapAction a;
      a.tensor = x;
      a.out_after = last_fwd;
      a.free_after = last_fwd;
      a.in_needed_by = first_bwd;
      a.in_issue_after = std::max(last_fwd, prev_layer_start[static_cast<size_t>(first_bwd)] - 1);
      if (a.in_issue_after <= a.free_after) continue;  // consumed at once: nothing to gain
      out.plan.actions.push_back(a);
      any = true;
    }
    offloaded_layers += any ? 1 : 0;
  }
  out.report = {{"policy", o_.conv_only ? "conv" : "all"},
                {"offloaded_tensors", out.plan.actions.size()},
                {"offloading_layers", offloaded_layers}};
  return out;
}

}  // namespace dlsim
