#pragma once
// A stable text key for "the same kernel": two ops with equal signatures do the same computation on the same
// shapes and types, so one measured time serves both (calibration tables are keyed by it).
#include <string>

#include "workloads/graph.h"

namespace dlsim {

// "<kind> in=<dtype>[d0,d1,...];... out=<dtype>[...];... attrs=<k>=<v>,..." with attributes in name order.
// Tensor and op names, ids, the phase and the workspace tensor are left out: they do not change the kernel
// (the workspace size follows from the algorithm, which follows from the shapes).
// Example: "Conv2d in=f32[32,3,224,224];f32[64,3,7,7] out=f32[32,64,112,112] attrs=kernel_h=7,kernel_w=7,stride_h=2"
std::string op_signature(const Graph& g, const Op& op);

}  // namespace dlsim
