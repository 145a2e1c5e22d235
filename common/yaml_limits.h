#pragma once
// What a YAML document may be before dlsim builds a tree of it: checked on yaml-cpp's parse events, so that no
// reader (nor yaml-cpp's own Load) ever walks a document that would not end.
//   - No alias inside the node it names (`a: &o [*o]`, or through any depth of lists and mappings, keys
//     included): yaml-cpp builds such a document as a graph with a cycle, and every walk of it recursed until the
//     stack overflowed (issue 27: an 11-byte file crashed every loader).
//   - At most kMaxYamlNodes nodes with every alias expanded ("billion laughs": nine levels of ten aliases are
//     511 bytes and 10^9 nodes), counted exactly in one pass: an anchored node's size is known when it closes.
//   - At most kMaxYamlNesting lists and mappings inside each other: every reader walks the tree recursively.
// Each refusal is a ConfigError with the file, the line and the key path ("vary.pool[2]") where it was found.
#include <cstdint>
#include <string>

namespace dlsim {

// The most nodes a document may stand for with its aliases expanded: 50 times the largest file dlsim ships
// (configs/hw/h100-sxm.yaml, about 21,000).
inline constexpr uint64_t kMaxYamlNodes = 1'000'000;
// The most lists and mappings nested inside each other: 20 times the deepest file dlsim ships (5 levels,
// configs/sweeps/default.yaml); yaml-cpp's own limit (2,000) would let each recursive reader go that deep.
inline constexpr int kMaxYamlNesting = 100;

// Throws ConfigError for the first violation of the limits above in the first document of `text`, and
// yaml-cpp's ParserException for a syntax error met before it.
void check_yaml_limits(const std::string& text, const std::string& file);

}  // namespace dlsim
