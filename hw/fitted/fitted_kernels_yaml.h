#pragma once
// The `kernel_model:` mapping of a hardware file, read and written (hw/fitted/fitted_kernels.h says what it holds):
//   kernel_model:
//     fitted_from: "..."      # the sweep it was fitted to (text)
//     timing: "..."           # how that sweep timed kernels (text, optional)
//     tile: 128               # optional, the default
//     min_split_k: 512        # optional, the default
//     classes:
//       conv_fwd.tf32.spatial: {fixed_us: 32.0, flop_scale: 0.28, wave_scale: 0.9, byte_scale: 3.3, records: 197}
// Every key is checked: an unknown one, a class name outside the grammar, a coefficient that is negative, not a
// number or beyond 1e6 is a ConfigError naming the file, line and key.
#include <string>

#include "common/yaml_reader.h"
#include "hw/fitted/fitted_kernels.h"
#include "hw/fitted/kernel_shape.h"

namespace dlsim {

FittedKernels fitted_kernels_from_yaml(const YamlMap& section);
// A YAML double-quoted scalar of free text (quotes and backslashes escaped, line breaks as \n, other control
// characters as '?').
std::string fitted_yaml_quoted(const std::string& text);
// The section as text, `kernel_model:` included, coefficients to 6 significant digits, classes in name order.
std::string fitted_kernels_to_yaml(const FittedKernels& f);
// One class as a YAML flow mapping, as the section writes it (the coefficients that are 0 and optional left out).
std::string fitted_class_to_yaml(const FittedKernelClass& c);

}  // namespace dlsim
