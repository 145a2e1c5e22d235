#pragma once
// Strict reading of YAML mappings: every key must be known, required keys present, values of the right type;
// any violation is a ConfigError naming the file, the line and the key.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/config_error.h"

namespace dlsim {

// Loads a YAML file; a missing file, a syntax error or a key given twice in one mapping is a ConfigError with
// file and line.
YAML::Node load_yaml_file(const std::string& path);
// The same for YAML text already in memory (`file` names it in errors): the fuzz targets' entry point.
YAML::Node parse_yaml_text(const std::string& text, const std::string& file);
// Throws ConfigError(file, line of the repeat, dotted key path) when any mapping under `node` repeats a key.
void reject_duplicate_keys(const YAML::Node& node, const std::string& file, const std::string& path);

// A mapping node together with the file it came from, so that errors can say where.
class YamlMap {
 public:
  YamlMap(YAML::Node node, std::string file, std::string context = "");

  const YAML::Node& node() const { return node_; }
  const std::string& file() const { return file_; }
  int line() const;                            // line of this mapping (1-based)
  int line_of(const std::string& key) const;   // line of the key, or of the mapping when absent

  bool has(const std::string& key) const;
  // Throws unless every key of the mapping is a name (yaml_key) in `allowed` (the error lists the allowed keys).
  void check_keys(const std::vector<std::string>& allowed) const;

  std::string get_string(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  std::string get_string(const std::string& key, const std::string& fallback) const;
  // Prose (a description, a caption): line breaks and tabs allowed, other control characters not.
  std::string get_text(const std::string& key) const;
  std::string get_text(const std::string& key, const std::string& fallback) const;
  int64_t get_int(const std::string& key, int64_t fallback) const;
  double get_double(const std::string& key, double fallback) const;
  bool get_bool(const std::string& key, bool fallback) const;
  YamlMap get_map(const std::string& key) const;
  YAML::Node get(const std::string& key) const;  // throws when missing

  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

 private:
  YAML::Node node_;
  std::string file_;
  std::string context_;  // e.g. "pool" for a nested mapping, prefixed to key names in errors
};

// Scalar conversion with a typed error: "expected an integer, got 'abc'". A double is finite (no nan or inf);
// a boolean one of true, True, yes, false, False, no; a string one line of printable text (no control
// character: names, choices and paths end up in runs.csv rows, folder names and labels).
int64_t yaml_to_int(const YAML::Node& n, const std::string& file, const std::string& key);
double yaml_to_double(const YAML::Node& n, const std::string& file, const std::string& key);
bool yaml_to_bool(const YAML::Node& n, const std::string& file, const std::string& key);
std::string yaml_to_string(const YAML::Node& n, const std::string& file, const std::string& key);
// Prose: a string that may hold line breaks and tabs (a description, a caption), no other control character.
std::string yaml_to_text(const YAML::Node& n, const std::string& file, const std::string& key);
// A mapping's key as a name: a ConfigError (at `context`, the mapping's dotted path) for a list, a mapping or
// null in a key's place, or a control character in it. Every reader that walks a mapping's keys uses it.
std::string yaml_key(const YAML::Node& key, const std::string& file, const std::string& context);
inline int yaml_line(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }
// The node at a dotted path ("pcie.h2d_pinned_gb_per_s") in a mapping, read without modifying it; an undefined
// node when any part is absent.
YAML::Node yaml_find_path(const YAML::Node& map, const std::string& dotted);

}  // namespace dlsim
