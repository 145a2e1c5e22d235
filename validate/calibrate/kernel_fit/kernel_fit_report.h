#pragma once
// The fit's report (`dlsim fit-kernels --report FILE`): the command, the fitted coefficients, and the
// cross-validation (kernel_crossval.h) per class and per held-out model, as Markdown; and
// (`--predictions FILE`) each sample's predicted times, as JSON, for a look below the class (a shape's sizes).
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "validate/calibrate/kernel_fit/fit_samples.h"
#include "validate/calibrate/kernel_fit/kernel_crossval.h"
#include "validate/calibrate/kernel_fit/kernel_sweep.h"

namespace dlsim {

std::string kernel_fit_report(const std::string& command, const FittedKernels& fitted, const KernelCrossValidation& cv,
                              const std::vector<std::string>& notes, const std::string& base_name);

// {"command": ..., "base": ..., "samples": [{the record's fields (for a flash-attention backward: its
// sdpa_fwd_bwd record's), "record" (its index in `sweep`: several sweeps' records joined in the order given),
// "device_timed" (its time holds no dispatch; where a fit has such samples its predictions are device times, and an
// event-timed sample's then lack its dispatch), "class", "measured_us" (the backward's share), "before_us",
// "in_sample_us", "kfold_us", "lomo_us" (zoo layers only)}, ...]} in the samples' order.
std::string kernel_predictions_json(const std::string& command, const std::string& base_name, const KernelSweep& sweep,
                                    const std::vector<FitSample>& samples, const KernelCrossValidation& cv);

}  // namespace dlsim
