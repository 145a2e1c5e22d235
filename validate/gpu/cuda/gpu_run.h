#pragma once
// What a run on the GPU is asked to do (RunOptions) and what it gives back (GpuRun): apart from the executor's
// API (cuda_executor.h) so that its working state (internal/executor.h) and the API both stand on them.
#include <nlohmann/json.hpp>

#include "program/trace.h"

namespace dlsim::cuda {

struct GpuRun {
  Trace trace;          // measured iterations only (warm-up left out), in the simulator's schema
  nlohmann::json report;  // pool report, arena high-water mark, peak reserved/live bytes, algorithms chosen
};

// Throws CudaError (a failed CUDA/cuDNN/cuBLAS call, naming it and the op) or ConfigError (an op it cannot map).
// With `check`, every command is followed by a device synchronisation and an error check, so that a fault in an
// asynchronous kernel names its own op instead of surfacing at the end of the iteration (slow: for debugging).
//
// `workspace` says how a convolution's cuDNN algorithm (or engine, through the graph API) is chosen: Graph
// (default) takes the first of cuDNN's heuristic list whose workspace fits the graph's workspace tensor, so that
// memory matches the simulator's to the byte; Any takes the first whatever its workspace (PyTorch's rule with cudnn.benchmark off), the workspace coming
// from the pool right before the op, so that times are what a framework gets and the report says, per op
// signature, which workspace each convolution really wants (what `dlsim calibrate` gives the simulator).
enum class WorkspaceRule { Graph, Any };
// `cuda_graph`: the warm-up iterations run eagerly, then one iteration is captured into a CUDA graph and the
// measured iterations are its replays, so that op spans are device time without the host's launch costs.
// `cudnn_api`: how convolutions reach cuDNN. Graph (default): the backend (graph) API, one execution plan per
// op built in prepare as PyTorch 2.x builds it (validate/gpu/cuda/cudnn_graph_conv.h), executed per launch; Legacy:
// cudnnConvolutionForward/BackwardData/BackwardFilter with an algorithm from cudnnGet*Algorithm_v7, as before.
enum class CudnnApi { Graph, Legacy };
const char* to_string(CudnnApi a);  // "graph", "legacy"
struct RunOptions {
  bool check = false;
  WorkspaceRule workspace = WorkspaceRule::Graph;
  bool cuda_graph = false;
  CudnnApi cudnn_api = CudnnApi::Graph;
};

}  // namespace dlsim::cuda
