#pragma once
// How well the fitted kernel model predicts shapes it was not fitted on, per class, against dlsim's pricing of the
// same kernels before it (the base hardware file's own model: the roofline with its per-class efficiencies):
//   k-fold by shape   the samples of a class split into k folds by shape (equal shapes in one fold; the split is
//                     by a hash of the shape, deterministic), each fold predicted by a fit to the others;
//   leave one model   the layers of each zoo model (src model:<name>) predicted by a fit to every other sample,
//   out               as a user's own model would be.
// Every prediction goes through the simulator's own path: the sample as a one-op graph (sample_graph.h) priced
// by the cost model a hardware file with that fit builds (hw/fitted/fitted_cost_model.h), its measured
// kernel_times set aside. The error of a prediction is |predicted - measured| / measured.
#include <map>
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/gpu_spec.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"
#include "validate/calibrate/kernel_fit/kernel_sweep.h"

namespace dlsim {

struct ErrorSummary {
  size_t n = 0;
  double median = 0;  // percent
  double p90 = 0;     // percent (linear interpolation between order statistics)
};
ErrorSummary summarize_errors(std::vector<double> percent);

struct ClassCrossValidation {
  size_t samples = 0;
  // How far a sample's least time lies below its median (us - us_min) / us: the timing's own spread, below which
  // no model's error can be told from noise (samples with us_min; none for a derived backward).
  ErrorSummary spread;
  ErrorSummary before;   // the base file's model
  ErrorSummary fitted;   // the fit to all samples, predicting them (in-sample)
  ErrorSummary kfold;
  // The k-fold errors of the samples measured under 1.5 times the class's fixed cost (fitted to all samples):
  // kernels whose time is mostly the fixed cost, and of the others, whose time is mostly their work.
  ErrorSummary kfold_near_fixed;
  ErrorSummary kfold_above_fixed;
  ErrorSummary lomo;     // only samples of zoo models (n = 0 when the class has none)
};

// One sample's predicted times (us) in each of the cross-validation's fits.
struct SamplePrediction {
  double before = 0;    // the base file's model
  double in_sample = 0; // the fit to all samples
  double kfold = 0;     // the fit to the other folds
  double lomo = 0;      // the fit to the other models' and the random samples (0: not a zoo model's layer)
};

struct KernelCrossValidation {
  int folds = 5;
  std::map<std::string, ClassCrossValidation> classes;
  std::vector<SamplePrediction> predictions;  // per sample, in the samples' order
  std::map<std::string, ErrorSummary> lomo_by_model;  // every class's samples of that model together
};

KernelCrossValidation cross_validate_kernels(const KernelSweep& sweep, const std::vector<FitSample>& samples,
                                             const GpuSpec& base, const FittedKernels& settings, int folds);

// The fold (0 .. folds-1) of each sample: per class, the distinct shape keys sorted by their FNV-1a hash (then
// by the key) and dealt round-robin.
std::vector<int> kfold_assignment(const std::vector<FitSample>& samples, int folds);

}  // namespace dlsim
