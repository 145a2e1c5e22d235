#pragma once
// Fits the fitted kernel model's classes (hw/fitted/fitted_kernels.h) to a sweep's samples. Per class, the
// coefficients (fixed_us, flop_scale, wave_scale, byte_scale; the memory-bound classes fixed_us and byte_scale
// only) minimise the sum of absolute relative errors |predicted - measured| / measured over its samples: the
// median relative error is what the model is judged by, and a least-squares fit let a few outliers (a shape
// where cuDNN's heuristics pick a slow kernel) pull every other prediction. The minimum is found by iteratively
// reweighted least squares (a fixed 40 rounds, each a non-negative least-squares solve, exact over every subset
// of the terms), so the same samples give the same coefficients on every run.
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/gpu_spec.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"

namespace dlsim {

// A class with fewer samples than this is not fitted (its ops keep the roofline), and the fit says so.
inline constexpr size_t kMinSamplesPerClass = 4;

// One class's coefficients from its samples (all of the same class). `settings` gives tile and min_split_k.
FittedKernelClass fit_kernel_class(const std::vector<const FitSample*>& samples, const GpuSpec& spec,
                                   const FittedKernels& settings);

// Every class with enough samples; `notes` says which were left out. The result's tile/min_split_k are
// `settings`', its text fields empty (the caller names the sweep).
FittedKernels fit_kernel_classes(const std::vector<FitSample>& samples, const GpuSpec& spec,
                                 const FittedKernels& settings, std::vector<std::string>& notes);

}  // namespace dlsim
