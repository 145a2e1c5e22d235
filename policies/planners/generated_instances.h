#pragma once
// Synthetic instances for tests and benchmarks: a capacity x horizon rectangle cut by random guillotine cuts
// into n buffers (a cut in address splits a buffer in two of the same lifetime, a cut in time splits its
// lifetime). The pieces tile the rectangle, so OPT = LOAD = capacity: a known optimum at any size.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// Deterministic for a given seed (own generator, not std::*_distribution, whose output varies by library).
std::vector<DsaBuffer> guillotine_instance(size_t n, uint64_t seed, uint64_t capacity = 1000, int64_t horizon = 1000);

}  // namespace dlsim
