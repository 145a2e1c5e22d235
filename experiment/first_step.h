#pragma once
// What a PyTorch training run allocates inside its first step rather than before it, for
// program/first_iteration.h, and when an experiment runs a first iteration that does so (`first_step`).
//
// - torch.optim's state: Adam's and AdamW's exp_avg and exp_avg_sq are made by _init_group at the start of the
//   first optimizer.step(), parameter by parameter, before any kernel of the step; SGD's momentum buffers are
//   cloned from the first gradients, one after another, before the momentum kernels. Either way after the first
//   backward, when its activations are back in the caching allocator's cache, and after AMP's unscale. Here: every
//   persistent tensor of kind OptimizerState that an op touches, one group in tensor order (the zoo adds them
//   parameter by parameter, exp_avg before exp_avg_sq; a recorded step in the order of its storages), allocated
//   right before the first op that touches any.
// - each host thread's cuBLAS and cuBLASLt workspaces (hw/cublas_workspace.h), at the thread's first matrix
//   product: Python's in the first forward, autograd's in the first backward.
// Everything else persistent (the parameters, the buffers) exists before the first step, as model.to(device)
// made it. run_experiment runs a lazy first step as one more iteration before the experiment's.
#include <vector>

#include "experiment/experiment.h"
#include "hw/cublas_workspace.h"
#include "policies/swap/core/swap_policy.h"
#include "program/first_iteration.h"
#include "workloads/graph.h"

namespace dlsim {

std::vector<FirstUse> pytorch_first_uses(const Graph& g, const CublasWorkspaces& cublas);

// Whether the experiment's first iteration allocates them at first use: `first_step: lazy`, or by default a
// one-GPU eager run on the pytorch-caching pool whose swap plan (`swap`, null: none) copies nothing, so no
// policy at all or one that only recomputes (Hugging Face's gradient checkpointing): the run PyTorch's own first
// step is. A plan that swaps or offloads is made for, and held to a memory limit on, the steady iteration; a
// CUDA graph is captured after eager warm-up steps; a rank's sharded state is its layout's.
bool lazy_first_step(const Experiment& e, const SwapPlan* swap);

}  // namespace dlsim
