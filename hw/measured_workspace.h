#pragma once
// Gives each convolution's workspace tensor the size its cuDNN algorithm needed on the real GPU, when the
// hardware file carries calibrated `conv_workspace` entries. The graph builder's figure (workloads/training.cc:
// 1/8 of the input and output bytes, at most 64 MiB) is an assumption; on an H100 cuDNN's first choices wanted
// 4.2x (ResNet-50) to 8x (VGG-16) more in total, and the runs held to the assumption were 1.4x to 4.3x slower.
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

struct WorkspaceCoverage {
  size_t ops = 0;     // ops with a workspace tensor
  size_t exact = 0;   // sized from an entry of the same signature
  size_t scaled = 0;  // sized from the same op measured at another batch: bytes * N / b, rounded up to 256 B
};

// Resizes the workspace tensors in place (exact signature first, then batch-free, else unchanged).
WorkspaceCoverage apply_measured_workspaces(Graph& g, const GpuSpec& spec);

}  // namespace dlsim
