#pragma once
// A recorded PyTorch training step (workloads/torch_step.h) as dlsim's training Graph: what `model: FILE.torchstep.json`
// in an experiment runs, through every pool, swap, recompute and concurrency policy.
//   storage -> Tensor: its bytes; persistent when it lives across steps (parameters, buffers, kept gradients,
//              optimizer state, the input batch); otherwise alive from the first to the last op that touches it.
//              A storage the GPU run keeps in host memory (a foreach Adam's step counts) is left out.
//   aten op -> Op: the kind dlsim prices it by (workloads/torch_step_kinds.cc) with its attributes; an op dlsim has
//              no kind for is an Other op costed by its memory traffic, and named in traffic_ops. Views (no data
//              moves) and bare allocations (empty) are no ops. Every op keeps the storages it reads and writes,
//              so each tensor's producer is the op that wrote it (what recomputation replays).
//   autograd's sums -> the engine's sum of the gradients of a tensor several ops read (an aten::add of two
//              gradients in the backward phase, outside any module) is a GradAccumulate op, as the zoo makes it.
//   saved    -> each tensor autograd saved is an input of the backward op that used it, so it is kept to that
//              use even where the kernel does not read it; that op's forward_op is the op that saved it.
//   frees    -> a tensor PyTorch freed later than its last use (a leaf's .grad until zero_grad, a saved tensor
//              not yet released) is an input of the last op before its recorded free, which holds it there.
// What the loader cannot see (cuDNN and cuBLAS workspaces, the caching allocator's rounding) is not in the graph.
#include <cstdint>
#include <map>
#include <string>

#include "workloads/graph.h"
#include "workloads/torch_step.h"

namespace dlsim {

struct TorchStepLoad {
  Graph graph;
  // What became of the recorded ops.
  int64_t recorded_ops = 0;
  int64_t views = 0;        // views and other ops that move no data
  int64_t allocations = 0;  // bare allocations (empty, empty_strided)
  int64_t host_ops = 0;     // ops on host memory only
  int64_t saved_attached = 0;
  int64_t grad_sums = 0;  // autograd's engine summing a tensor's gradients: GradAccumulate ops, not Adds  // saved tensors made an input of the backward op that used them
  // Tensors PyTorch freed after their last use, held to the op before their recorded free, and their bytes.
  int64_t held_past_last_use = 0;
  uint64_t held_bytes = 0;
  // aten ops dlsim has no kind for (costed as their memory traffic), by name: how many of each.
  std::map<std::string, int64_t> traffic_ops;
  // dtypes dlsim does not model (held as bytes), by name: how many storages.
  std::map<std::string, int64_t> other_dtypes;
};

TorchStepLoad torch_step_graph(const TorchStepFile& file);
// read_torch_step + torch_step_graph.
TorchStepLoad load_torch_step(const std::string& path, int64_t max_ops = 0);

}  // namespace dlsim
