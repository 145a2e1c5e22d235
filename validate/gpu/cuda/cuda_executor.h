#pragma once
// Runs a plan file's Program on the real GPU: one cudaMalloc'd arena beneath the very pool object the simulator
// uses, cuDNN / cuBLAS / our kernels per op, streams and events as the Program says, CUDA-event timings.
#include <nlohmann/json.hpp>

#include <ostream>

#include "program/trace.h"
#include "validate/gpu/program_file.h"

namespace dlsim::cuda {

struct GpuRun {
  Trace trace;          // measured iterations only (warm-up left out), in the simulator's schema
  nlohmann::json report;  // pool report, arena high-water mark, peak reserved/live bytes, algorithms chosen
};

// Throws CudaError (a failed CUDA/cuDNN/cuBLAS call, naming it and the op) or ConfigError (an op it cannot map).
// With `check`, every command is followed by a device synchronisation and an error check, so that a fault in an
// asynchronous kernel names its own op instead of surfacing at the end of the iteration (slow: for debugging).
//
// `workspace` says how a convolution's cuDNN algorithm is chosen: Graph (default) takes the first of cuDNN's
// heuristic list whose workspace fits the graph's workspace tensor, so that memory matches the simulator's to the
// byte; Any takes the first whatever its workspace (PyTorch's rule with cudnn.benchmark off), the workspace coming
// from the pool right before the op, so that times are what a framework gets and the report says, per op
// signature, which workspace each convolution really wants (what `dlsim calibrate` gives the simulator).
enum class WorkspaceRule { Graph, Any };
// `cuda_graph`: the warm-up iterations run eagerly, then one iteration is captured into a CUDA graph and the
// measured iterations are its replays, so that op spans are device time without the host's launch costs.
struct RunOptions {
  bool check = false;
  WorkspaceRule workspace = WorkspaceRule::Graph;
  bool cuda_graph = false;
};
GpuRun run_plan_on_gpu(const ProgramFile& plan, std::ostream& log, const RunOptions& options = {});

}  // namespace dlsim::cuda
