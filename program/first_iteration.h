#pragma once
// The first iteration where a real run's differs from the steady state: tensors a training step allocates at
// their first use inside it and then holds, which the lowering (program/lower.h) allocates in setup with the
// weights. PyTorch has two such kinds (experiment/first_step.h names them): torch.optim's state, made in the first
// optimizer.step() (Adam's moments in _init_group, SGD's momentum buffers cloned from the first gradients), after
// the first backward has freed its activations into the caching allocator's cache; and each host thread's cuBLAS
// workspaces, made at the thread's first matrix product. Where they are allocated changes which cached blocks
// they take, hence the segments the allocator opens, and the reserved bytes are never given back: a run's
// max_memory_reserved is the first iteration's layout as much as the steady state's.
#include <vector>

#include "program/program.h"
#include "workloads/graph.h"

namespace dlsim {

// One group of tensors allocated together, in the order given, right before the first launch in the iteration
// of any op in `ops` or of any op that reads or writes one of the tensors (torch.optim's _init_group makes every
// parameter's state before the step's first kernel).
struct FirstUse {
  std::vector<TensorId> tensors;
  std::vector<OpId> ops;
  // Before that op's own allocations (its outputs', its workspace's), which the lowering puts right before its
  // launch: torch.optim makes the state before the step allocates anything. Else between them and the launch, as
  // a library call allocates its scratch once its output exists (a cuBLAS workspace).
  bool before_op_allocations = false;
};

// Moves each group's Allocs out of p.setup into p.first_iteration, a copy of p.iteration with the Allocs put
// where the group is first used, on the stream setup allocated each tensor on (where teardown frees it; the
// stream of a held allocation only decides which streams may reuse its memory once freed). Left as they are: a
// group none of whose ops is launched in the iteration, a tensor setup does not allocate (a host step keeps it on
// the host) and one the iteration allocates, frees, copies or records itself (a swap plan moves it: its first
// residency is the plan's). Nothing to move: p is unchanged, first_iteration empty. Throws
// std::invalid_argument when a tensor is in two groups or p.first_iteration is already set.
void allocate_at_first_use(Program& p, const Graph& g, const std::vector<FirstUse>& groups);

}  // namespace dlsim
