#pragma once
// What a YAML document may be before any reader walks it, so that none ever walks a document that would not end.
//   - No alias inside the node it names (`a: &o [*o]`, or through any depth of lists and mappings, keys
//     included): yaml-cpp builds such a document as a graph with a cycle, and every walk of it recursed until the
//     stack overflowed (issue 27: an 11-byte file crashed every loader).
//   - At most kMaxYamlNodes nodes with every alias expanded ("billion laughs": nine levels of ten aliases are
//     511 bytes and 10^9 nodes), each anchored node counted once and its size reused for its aliases.
//   - At most kMaxYamlNesting lists and mappings inside each other: every reader walks the tree recursively.
// Each refusal is a ConfigError with the file, the line and the key path ("vary.pool[2]") where it was found.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>

namespace dlsim {

// The most nodes a document may stand for with its aliases expanded: 50 times the largest file dlsim ships
// (configs/hw/h100-sxm.yaml, about 21,000).
inline constexpr uint64_t kMaxYamlNodes = 1'000'000;
// The most lists and mappings nested inside each other: 20 times the deepest file dlsim ships (5 levels,
// configs/sweeps/default.yaml); yaml-cpp's own limit (2,000) would let each recursive reader go that deep.
inline constexpr int kMaxYamlNesting = 100;

// Whether the tree yaml-cpp built keeps the limits: one walk, aliases counted once each (a node is identified by
// its position and confirmed with Node::is), a cycle found as a node met again while it is being walked, no walk
// deeper than the limit. The check every document takes: a second parse (below) would double the reading time
// of every file, the 860 KB calibrated hardware file's most of all.
bool within_yaml_limits(const YAML::Node& root);

// Throws ConfigError for the first violation of the limits above in the first document of `text`, naming the
// alias's own line and anchor (which the built tree no longer knows: an alias is its anchored node), and
// yaml-cpp's ParserException for a syntax error met before it. Follows the parse events, so it never walks a
// cycle and refuses a deep nesting before yaml-cpp's parser recursion goes deep: the reader calls it when
// within_yaml_limits says no or yaml-cpp's parse failed (its own depth guard, at 2,000 levels, says "bad file").
void check_yaml_limits(const std::string& text, const std::string& file);

}  // namespace dlsim
