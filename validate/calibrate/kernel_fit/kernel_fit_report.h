#pragma once
// The fit's report (`dlsim fit-kernels --report FILE`): the command, the fitted coefficients, and the
// cross-validation (kernel_crossval.h) per class and per held-out model, as Markdown.
#include <string>
#include <vector>

#include "hw/fitted/fitted_kernels.h"
#include "validate/calibrate/kernel_fit/kernel_crossval.h"

namespace dlsim {

std::string kernel_fit_report(const std::string& command, const FittedKernels& fitted, const KernelCrossValidation& cv,
                              const std::vector<std::string>& notes, const std::string& base_name);

}  // namespace dlsim
