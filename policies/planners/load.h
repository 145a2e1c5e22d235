#pragma once
// LOAD: the largest total size of buffers live at one time step. Any placement's height is at least LOAD,
// because the buffers live at that step must sit side by side.
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// A sweep over the sorted interval end points: O(n log n). At equal times ends are processed before starts,
// because [lower, upper) is half-open: a buffer ending at t and one starting at t are never live together.
uint64_t compute_load(const std::vector<DsaBuffer>& buffers);

}  // namespace dlsim
