#pragma once
// Corrects the hardware file's kernel times per kernel class from a GPU trace's kernels (torch.profiler with
// ProfilerActivity.CUDA: each kernel linked by its correlation id to the launch that issued it, the launch to the
// top-level host op it ran inside, the host op to dlsim's graph op by validate/calibrate/torch_profile/
// profile_match.h). A matched forward op's kernels are its graph op's; an autograd node's are those of the graph's
// backward ops of the same forward op. Where one host op stands for several graph ops, its kernel time is shared
// among them in proportion to the file's own prediction for each (the trace cannot tell them apart).
// Per class, the ratio of the measured kernel time to the predicted, both summed over the class's ops (a
// time-weighted ratio: the class's total comes out as measured; a median of per-op ratios does not, and on real
// GPU traces, where one class holds a model's forward and backward kernels, it pulled classes the wrong way):
//   - an op the fitted kernel model prices (hw/fitted/: a `kernel_model:` section whose class covers its kernels)
//     corrects that class: the ratio to the file's prediction scales the class's four coefficients
//     (fixed_us, flop_scale, wave_scale, byte_scale), which scales its predicted time by that factor (where the
//     sweep's fixed cost held the host's dispatch, the device's fixed cost is the roofline's and is not scaled,
//     so the class's time moves by a little less);
//   - an op the roofline prices corrects its kind's roofline.op_class_scale: the ratio to the single-efficiency
//     roofline's time, as `dlsim calibrate DIR...` fits it from dlsim-cuda's runs
//     (validate/calibrate/calibrate.h), with the math path in op_class_scale_path for matrix kinds;
//   - an op the file's kernel_times table prices exactly is left alone (a measured kernel already).
#include <map>
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "hw/hardware.h"
#include "hw/math_path.h"
#include "validate/calibrate/torch_profile/host_profile_fit.h"

namespace dlsim {

struct KernelClassCorrection {
  size_t samples = 0;     // graph ops with measured kernels
  double measured_us = 0; // their kernels' time in the traces, summed
  double predicted_us = 0;  // the file's prediction for them, summed
  double scale = 1;       // measured / predicted, summed (for op_class_scale: / the single-efficiency roofline's)
};

struct KernelProfileFit {
  size_t host_ops_with_kernels = 0;  // matched host ops whose launches issued kernels
  size_t kernels = 0;                // those kernels
  size_t trace_kernels = 0;          // every kernel of the traces (those of unmatched ops, or outside the steps, too)
  size_t table_ops = 0;              // graph ops the file's kernel_times priced (left alone)
  std::map<std::string, KernelClassCorrection> fitted_classes;  // by fitted class name
  std::map<OpKind, KernelClassCorrection> roofline_kinds;       // by op kind
  std::map<OpKind, MathPath> roofline_paths;                    // matrix kinds: the path measured
  FittedKernels corrected;  // the --hw file's fitted classes that were corrected, coefficients scaled
  bool empty() const { return fitted_classes.empty() && roofline_kinds.empty(); }
};

KernelProfileFit fit_kernels_from_profiles(const std::vector<MatchedProfile>& profiles, const Hardware& hw);

// The YAML text of the corrections (kernel_model.classes and roofline.op_class_scale[_path] entries), "" when none.
std::string kernel_corrections_yaml(const KernelProfileFit& f);

}  // namespace dlsim
