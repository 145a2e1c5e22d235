#pragma once
// A hardware file with a fitted kernel_model: the base file's text kept as it is (its datasheet figures and the
// comments that cite them), any kernel_model entry it had replaced by the fitted section.
#include <string>

#include "hw/fitted/fitted_kernels.h"

namespace dlsim {

// `base_text` without its top-level kernel_model entry (the key's line and the indented, blank and comment lines
// under it) and with its top-level description replaced by `description` (the same way), then `comment` (each
// line prefixed "# ") and the section. The caller checks that it loads.
std::string fitted_hardware_text(const std::string& base_text, const FittedKernels& fitted, const std::string& comment,
                                 const std::string& description);

}  // namespace dlsim
