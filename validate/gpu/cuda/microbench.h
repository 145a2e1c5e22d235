#pragma once
// The micro-benchmarks the hardware model needs, measured on the real GPU (see microbench_records.h).
#include <ostream>

#include "validate/gpu/microbench_records.h"

namespace dlsim::cuda {

// quick: fewer sizes and repetitions (a smoke run); the full run covers 4 KiB to 1 GiB.
MicrobenchResults run_microbenchmarks(bool quick, std::ostream& log);

}  // namespace dlsim::cuda
