#pragma once
// A sweep's records as the fit sees them: one sample per kernel, its fitted class, its shape (hw/fitted/
// kernel_shape.h) and its measured time. A flash-attention backward is measured only with its forward
// (sdpa_fwd_bwd): its sample is the difference with the forward record of the same shape.
#include <string>
#include <vector>

#include "hw/fitted/kernel_shape.h"
#include "validate/calibrate/kernel_fit/kernel_sweep.h"

namespace dlsim {

struct FitSample {
  KernelShape shape;
  std::string cls;            // the class it is fitted to (class_candidates(shape).front())
  double us = 0;              // measured time (microseconds)
  std::string shape_key;      // the class and the sizes: the k-fold split keeps equal keys together
  std::string model;          // the zoo model a layer came from (src "model:<name>[-b<batch>][:<pass>]"), else ""
  size_t record = 0;          // the sweep record it came from (for a backward: the sdpa_fwd_bwd record)
  size_t paired_record = 0;   // a backward's forward record (else = record)
  // Timed on the GPU alone (a profiler trace's kernels, trace_samples.h): its time holds no host dispatch. An
  // event-timed sweep's records do not; a fit of both gives each kind its own intercept (kernel_fit.h).
  bool device_timed = false;
  // How much its relative error counts in the fit (1: as every sweep record). A trace's kernel counts by its share
  // of its class's traced time (trace_samples.h): what a step's time sums.
  double weight = 1;
};

// `notes` collects what was left out and why (a backward whose forward was not measured, or measured slower; an
// fp32 NCHW grouped convolution, whose time holds the layout transposes cuDNN runs around it, hw/fitted/conv_backend.h).
std::vector<FitSample> fit_samples(const KernelSweep& sweep, std::vector<std::string>& notes);
// The kernel shape a record describes (for sdpa_fwd_bwd: its backward).
KernelShape sweep_record_shape(const SweepRecord& r);

}  // namespace dlsim
