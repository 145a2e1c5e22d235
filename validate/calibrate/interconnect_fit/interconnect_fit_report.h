#pragma once
// What `dlsim fit-interconnect` prints and writes of an InterconnectFit (interconnect_fit.h): the report (each
// parameter from its start to its fitted value, or why it was kept; each point measured against the starting and
// the fitted model, its residual, its leave-one-out prediction and what it constrains), and the hardware file
// that starts from BASE (`base:`) and overrides only the fitted parameters of its `interconnect:` section.
#include <string>

#include "validate/calibrate/interconnect_fit/interconnect_fit.h"

namespace dlsim {

std::string interconnect_fit_report(const InterconnectFit& fit);

// The written file: `comment` (lines, each becoming a YAML comment), `base: <base_reference>`, the description,
// and the fitted keys of `interconnect:` (those not fitted are BASE's through `base:`).
std::string fitted_interconnect_yaml(const InterconnectFit& fit, const std::string& comment,
                                     const std::string& base_reference, const std::string& description);

}  // namespace dlsim
