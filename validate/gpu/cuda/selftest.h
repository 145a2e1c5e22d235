#pragma once
// dlsim-cuda selftest: our own kernels (validate/gpu/cuda/kernels.h) against float64 references on the CPU, on random
// inputs (never zeros) and outputs poisoned with NaN first, so that a wrong or unwritten element shows. Reports
// ||out - ref|| / ||ref|| per case; fp32 arithmetic passes under 1e-5. Then cuDNN's convolutions through both APIs
// (validate/gpu/cuda/selftest_conv.h), each with the tolerance its data type allows.
#include <ostream>

namespace dlsim::cuda {

// Returns the number of failed cases (0: all passed).
int run_selftest(std::ostream& out);

}  // namespace dlsim::cuda
