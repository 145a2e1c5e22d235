#pragma once
// A what-if on the device model alone: independent kernels issued together, one per stream, at time 0 with no
// launch cost (as a CUDA Graph replays them), run until the last ends. `dlsim calibrate` compares it with the
// measured concurrent convolutions (validate/calibrate/concurrency_regression.h) to fit the concurrency constants.
#include <cstdint>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"

namespace dlsim {

struct ConcurrentKernel {
  KernelCost cost;     // standalone time and grid
  uint64_t bytes = 0;  // HBM traffic (the bandwidth it demands is bytes over its standalone time)
};

// When the last of `kernels` ends (ns from their common start), each on its own stream of `gpu`.
TimeNs concurrent_makespan(const GpuSpec& gpu, const std::vector<ConcurrentKernel>& kernels);

}  // namespace dlsim
