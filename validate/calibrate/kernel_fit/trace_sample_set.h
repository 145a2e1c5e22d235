#pragma once
// What the profiler traces gave a kernel fit (validate/calibrate/kernel_fit/trace_samples.h fills it, the optimizer's
// launches among them: multi_tensor_samples.h): the samples, and how much of the matched steps' kernel time they
// hold.
#include <cstddef>
#include <string>
#include <vector>

#include "validate/calibrate/kernel_fit/fit_samples.h"

namespace dlsim {

struct TraceSamples {
  std::vector<FitSample> samples;
  size_t units = 0;           // units with kernels in the matched steps
  size_t units_sampled = 0;   // of which became samples
  double kernel_us = 0;       // the matched units' kernel time, summed over the steps
  double sampled_us = 0;      // of which went into samples (without the gap)
  std::vector<std::string> skipped;  // per reason: "<n> units of <kinds>: <why>"
};

}  // namespace dlsim
