#pragma once
// Runs a plan file's Program on the real GPU: one cudaMalloc'd arena beneath the very pool object the simulator
// uses, cuDNN / cuBLAS / our kernels per op, streams and events as the Program says, CUDA-event timings.
#include <nlohmann/json.hpp>

#include <ostream>

#include "sim/trace.h"
#include "validate/plan_file.h"

namespace dlsim::cuda {

struct GpuRun {
  Trace trace;          // measured iterations only (warm-up left out), in the simulator's schema
  nlohmann::json report;  // pool report, arena high-water mark, peak reserved/live bytes, algorithms chosen
};

// Throws CudaError (a failed CUDA/cuDNN/cuBLAS call, naming it and the op) or ConfigError (an op it cannot map).
GpuRun run_plan_on_gpu(const PlanFile& plan, std::ostream& log);

}  // namespace dlsim::cuda
