#pragma once
// The text of an experiment's `hw_override` in its hardware label ("h100-sxm+pcie.latency_us=10"): the runs.csv
// `hw` column, which `dlsim sweep --resume` and `--merge` match rows to points by, and `run --json`'s "hw". It must
// be exact (two overrides that the hardware reader reads differently never share a text: an earlier form wrote
// every list as "...", and two points of a sweep swapped their rows) and canonical (two that it reads alike share
// one, so that a reordered sweep file still resumes).
//
// The form: nested mappings are flattened to dotted paths, "pcie.latency_us=10", joined by commas in key order
// (mappings merge key by key, so their order means nothing); any other value is written whole: a list as
// [a,b,...] in its order, a mapping inside a list as {key=value,...} in key order, an empty mapping as {}, null
// as ~. A scalar is written as the file wrote it (25.0 and 25 stay apart: two texts for one value make two keys,
// never one key for two values); a key or a scalar that holds anything but letters, digits and "_.+-" is written
// in double quotes with JSON's escapes, so that no separator can appear inside a value.
#include <string>

#include <yaml-cpp/yaml.h>

namespace dlsim {

// "" for a null or empty mapping.
std::string hw_override_label(const YAML::Node& overrides);

// The label an earlier dlsim wrote for the same mapping (file order, lists and nested values as "...", scalars as
// written): --resume and --merge read rows of older runs.csv files by it. `exact` is false when it loses
// information (it holds a "..."), and then no row can be matched by it.
std::string legacy_hw_override_label(const YAML::Node& overrides, bool& exact);

}  // namespace dlsim
