#pragma once
// Writes fitted values into a hardware file's `roofline:` block as text, between marker comments, so that the
// file's other lines and their provenance comments stay as they are:
//   roofline:
//     compute_efficiency: 0.6         # [A] ...
//     # [F] begin: <comment lines>
//     occupancy_scaling: true
//     conv_fwd_tf32_efficiency: 0.412
//     # [F] end
// A second write replaces the block (the same inputs give the same file). [F] marks a value fitted to published
// measurements; a calibration on the real GPU replaces it.
#include <string>
#include <utility>
#include <vector>

namespace dlsim {

// `text` with its [F] block (if any) replaced by one holding `comment` lines and `key: value` lines, at the end
// of the top-level `roofline:` mapping. An empty `values` removes the block. Throws ConfigError(file) when the
// text has no top-level `roofline:` line or an unterminated block.
std::string with_calibrated_block(const std::string& text, const std::vector<std::string>& comment,
                              const std::vector<std::pair<std::string, std::string>>& values, const std::string& file);

}  // namespace dlsim
