#include "experiment/first_step.h"

namespace dlsim {

std::vector<FirstUse> pytorch_first_uses(const Graph& g, const CublasWorkspaces& cublas) {
  std::vector<FirstUse> out;
  FirstUse state;
  std::vector<char> is_state(g.tensors().size(), 0);
  for (const Tensor& t : g.tensors())
    if (t.persistent && t.kind == TensorKind::OptimizerState) is_state[static_cast<size_t>(t.id)] = 1;
  std::vector<char> used(g.tensors().size(), 0);
  for (const Op& op : g.ops()) {
    bool any = false;
    auto see = [&](TensorId t) {
      if (t == kNoTensor || !is_state[static_cast<size_t>(t)]) return;
      used[static_cast<size_t>(t)] = 1;
      any = true;
    };
    for (TensorId t : op.inputs) see(t);
    for (TensorId t : op.outputs) see(t);
    if (any) state.ops.push_back(op.id);
  }
  for (const Tensor& t : g.tensors())
    if (used[static_cast<size_t>(t.id)]) state.tensors.push_back(t.id);
  state.before_op_allocations = true;  // _init_group runs before the step's first kernel allocates anything
  if (!state.tensors.empty()) out.push_back(std::move(state));
  for (const CublasWorkspaces::Thread& th : cublas.per_thread)
    if (!th.workspaces.empty()) out.push_back({th.workspaces, th.matmuls});
  return out;
}

bool lazy_first_step(const Experiment& e, const SwapPlan* swap) {
  if (e.first_step) return *e.first_step == FirstStep::Lazy;
  return e.pool.name == "pytorch-caching" && e.parallel.is_single() && e.launch == LaunchMode::Eager &&
         (swap == nullptr || !swap->copies_data());
}

}  // namespace dlsim
