#pragma once
// Runs a plan file's Program on the real GPU: one cudaMalloc'd arena beneath the very pool object the simulator
// uses, cuDNN / cuBLAS / our kernels per op, streams and events as the Program says, CUDA-event timings.
#include <ostream>

#include "validate/gpu/cuda/gpu_run.h"
#include "validate/gpu/program_file.h"

namespace dlsim::cuda {

GpuRun run_plan_on_gpu(const ProgramFile& plan, std::ostream& log, const RunOptions& options = {});

}  // namespace dlsim::cuda
