#pragma once
// Fits the fitted kernel model's classes (hw/fitted/fitted_kernels.h) to a sweep's samples. Per class, the
// coefficients (fixed_us, flop_scale, wave_scale, byte_scale; the memory-bound classes fixed_us and byte_scale
// only) minimise the sum of absolute relative errors |predicted - measured| / measured over its samples: the
// median relative error is what the model is judged by, and a least-squares fit let a few outliers (a shape
// where cuDNN's heuristics pick a slow kernel) pull every other prediction. The minimum is found by iteratively
// reweighted least squares (a fixed 40 rounds, each a non-negative least-squares solve, exact over every subset
// of the terms), so the same samples give the same coefficients on every run.
// Device-timed samples (a profiler trace's kernels) fitted with event-timed ones (a sweep whose short kernels hold
// PyTorch's dispatch) share the class's work terms but not its intercept: a fifth term, 1 for an event-timed
// sample and 0 for a device-timed one, takes the dispatch, and the class's fixed_us is the device's. A class that
// has only event-timed samples in such a fit keeps its fixed_us less the median of the other classes' dispatch
// terms (the fit's notes say which), so that every class's fixed cost is a device time.
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/gpu_spec.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"

namespace dlsim {

// A class with fewer samples than this is not fitted (its ops keep the roofline, or the next class of
// class_candidates), and the fit says so; unless they are all of one shape, which gives the one coefficient such
// samples determine, a rate over the work (fit_kernel_class).
inline constexpr size_t kMinSamplesPerClass = 4;

// One class's coefficients from its samples (all of the same class). `settings` gives tile and min_split_k.
// `dispatch_us`, when given, receives the dispatch term (0 unless the class has samples of both timings).
FittedKernelClass fit_kernel_class(const std::vector<const FitSample*>& samples, const GpuSpec& spec,
                                   const FittedKernels& settings, double* dispatch_us = nullptr);

// Every class with enough samples; `notes` says which were left out. The result's tile/min_split_k are
// `settings`', its text fields empty (the caller names the sweep).
FittedKernels fit_kernel_classes(const std::vector<FitSample>& samples, const GpuSpec& spec,
                                 const FittedKernels& settings, std::vector<std::string>& notes);

}  // namespace dlsim
