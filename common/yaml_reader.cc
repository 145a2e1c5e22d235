#include "common/yaml_reader.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include "common/input_file.h"
#include "common/strings.h"
#include "common/yaml_limits.h"

namespace dlsim {

void reject_duplicate_keys(const YAML::Node& node, const std::string& file, const std::string& path) {
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) reject_duplicate_keys(node[i], file, path);
  } else if (node.IsMap()) {
    std::map<std::string, int> first_line;
    for (const auto& kv : node) {
      const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : std::string("<non-scalar key>");
      const std::string where = path.empty() ? key : path + "." + key;
      const auto [it, fresh] = first_line.emplace(key, yaml_line(kv.first));
      if (!fresh)
        throw ConfigError(file, yaml_line(kv.first), where,
                          "duplicate key (first given at line " + std::to_string(it->second) + ")");
      reject_duplicate_keys(kv.second, file, where);
    }
  }
}

namespace {

YAML::Node parse_yaml(const std::string& text, const std::string& path) {
  try {
    YAML::Node root;
    try {
      root = YAML::Load(text);
    } catch (const YAML::Exception&) {
      // yaml-cpp's own depth guard (2,000 levels) says only "bad file": the event pass refuses the nesting at
      // dlsim's limit, with the place, and otherwise meets the same syntax error.
      check_yaml_limits(text, path);
      throw;
    }
    // The limits before any other walk: yaml-cpp builds an alias cycle as a cyclic graph, which no recursive
    // walk would finish (issue 27). Past one, the event pass names the alias's own line and anchor.
    if (!within_yaml_limits(root)) {
      check_yaml_limits(text, path);
      throw ConfigError(path, 0, "", "the document is past dlsim's limits on aliases and nesting (common/yaml_limits.h)");
    }
    // yaml-cpp keeps both entries of a repeated key and lookups find the first: a silent choice. YAML 1.2 says
    // keys are unique, so a repeat is an error naming both lines.
    reject_duplicate_keys(root, path, "");
    return root;
  } catch (const YAML::Exception& e) {
    throw ConfigError(path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "YAML syntax error: " + e.msg);
  }
}
}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
  const std::string text = read_input_file(path);  // a folder or an unreadable file: its path and the reason
  return parse_yaml(text, path);
}

YAML::Node parse_yaml_text(const std::string& text, const std::string& file) { return parse_yaml(text, file); }

namespace {
std::string scalar_text(const YAML::Node& n) { return n.IsScalar() ? n.Scalar() : std::string("<non-scalar>"); }
}  // namespace

int64_t yaml_to_int(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw ConfigError(file, yaml_line(n), key, "expected an integer, got a " + std::string(n.IsMap() ? "mapping" : n.IsSequence() ? "list" : "null"));
  const std::string& s = n.Scalar();
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || errno == ERANGE)
    throw ConfigError(file, yaml_line(n), key, "expected an integer, got '" + s + "'");
  return v;
}

double yaml_to_double(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw ConfigError(file, yaml_line(n), key, "expected a number, got a " + std::string(n.IsMap() ? "mapping" : n.IsSequence() ? "list" : "null"));
  const std::string& s = n.Scalar();
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0') throw ConfigError(file, yaml_line(n), key, "expected a number, got '" + s + "'");
  // strtod reads nan, inf and 1e999 (as inf): no parameter means anything by them, and a NaN passes every
  // range check (each comparison with it is false).
  if (!std::isfinite(v)) throw ConfigError(file, yaml_line(n), key, "expected a finite number, got '" + s + "'");
  return v;
}

namespace {
// The spellings of a boolean dlsim reads, the error lists them all (YAML 1.1's on/off/y/n are not among them).
constexpr std::array<std::pair<std::string_view, bool>, 6> kBoolSpellings = {
    {{"true", true}, {"True", true}, {"yes", true}, {"false", false}, {"False", false}, {"no", false}}};
}  // namespace

bool yaml_to_bool(const YAML::Node& n, const std::string& file, const std::string& key) {
  std::string s = scalar_text(n);
  for (const auto& [spelling, value] : kBoolSpellings)
    if (s == spelling) return value;
  std::string valid;
  for (const auto& [spelling, value] : kBoolSpellings) valid += (valid.empty() ? "" : ", ") + std::string(spelling);
  throw ConfigError(file, yaml_line(n), key, "expected a boolean (" + valid + "), got '" + s + "'");
}

namespace {
// The first control character of `s` (a line break, a tab, ...), as "U+000A", or "" when there is none.
std::string first_control(const std::string& s, bool lines_allowed) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (lines_allowed && (c == '\n' || c == '\t')) continue;
    if (c < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "U+%04X", c);
      return code;
    }
  }
  return "";
}
}  // namespace

std::string yaml_to_string(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw ConfigError(file, yaml_line(n), key, "expected a string");
  // Names, choices and paths end up in runs.csv rows, labels, folder names and messages, where a line break
  // (or any control character) splits or garbles what others read.
  if (const std::string c = first_control(n.Scalar(), false); !c.empty())
    throw ConfigError(file, yaml_line(n), key, "a control character (" + c + ") in a name or value: it must be one line of printable text");
  return n.Scalar();
}

std::string yaml_to_text(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw ConfigError(file, yaml_line(n), key, "expected a string");
  if (const std::string c = first_control(n.Scalar(), true); !c.empty())
    throw ConfigError(file, yaml_line(n), key, "a control character (" + c + ") in a text: only line breaks and tabs may be in one");
  return n.Scalar();
}

std::string yaml_key(const YAML::Node& key_node, const std::string& file, const std::string& context) {
  if (!key_node.IsScalar())
    throw ConfigError(file, yaml_line(key_node), context,
                      std::string("a key must be a name, got ") +
                          (key_node.IsMap() ? "a mapping" : key_node.IsSequence() ? "a list" : "null"));
  if (const std::string c = first_control(key_node.Scalar(), false); !c.empty())
    throw ConfigError(file, yaml_line(key_node), context, "a control character (" + c + ") in a key");
  return key_node.Scalar();
}

YamlMap::YamlMap(YAML::Node node, std::string file, std::string context)
    : node_(std::move(node)), file_(std::move(file)), context_(std::move(context)) {
  if (!node_.IsMap()) {
    throw ConfigError(file_, yaml_line(node_), context_,
                      node_.IsNull() ? "expected a mapping of keys to values, got nothing" : "expected a mapping of keys to values");
  }
}

int YamlMap::line() const { return yaml_line(node_); }

int YamlMap::line_of(const std::string& key) const {
  for (auto it = node_.begin(); it != node_.end(); ++it)
    if (it->first.Scalar() == key) return yaml_line(it->first);
  return line();
}

bool YamlMap::has(const std::string& key) const { return static_cast<bool>(node_[key]); }

void YamlMap::fail(const std::string& key, const std::string& message) const {
  std::string full = context_.empty() ? key : (key.empty() ? context_ : context_ + "." + key);
  throw ConfigError(file_, line_of(key), full, message);
}

void YamlMap::check_keys(const std::vector<std::string>& allowed) const {
  for (auto it = node_.begin(); it != node_.end(); ++it) {
    const std::string k = yaml_key(it->first, file_, context_);
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string full = context_.empty() ? k : context_ + "." + k;
      throw ConfigError(file_, yaml_line(it->first), full, "unknown key; valid keys: " + join(allowed));
    }
  }
}

YAML::Node YamlMap::get(const std::string& key) const {
  YAML::Node n = node_[key];
  if (!n) fail(key, "missing required key");
  return n;
}

namespace {
std::string full_key(const std::string& ctx, const std::string& key) { return ctx.empty() ? key : ctx + "." + key; }
}  // namespace

std::string YamlMap::get_string(const std::string& key) const { return yaml_to_string(get(key), file_, full_key(context_, key)); }
int64_t YamlMap::get_int(const std::string& key) const { return yaml_to_int(get(key), file_, full_key(context_, key)); }
double YamlMap::get_double(const std::string& key) const { return yaml_to_double(get(key), file_, full_key(context_, key)); }
bool YamlMap::get_bool(const std::string& key) const { return yaml_to_bool(get(key), file_, full_key(context_, key)); }
std::string YamlMap::get_string(const std::string& key, const std::string& fb) const { return has(key) ? get_string(key) : fb; }
std::string YamlMap::get_text(const std::string& key) const { return yaml_to_text(get(key), file_, full_key(context_, key)); }
std::string YamlMap::get_text(const std::string& key, const std::string& fb) const { return has(key) ? get_text(key) : fb; }
int64_t YamlMap::get_int(const std::string& key, int64_t fb) const { return has(key) ? get_int(key) : fb; }
double YamlMap::get_double(const std::string& key, double fb) const { return has(key) ? get_double(key) : fb; }
bool YamlMap::get_bool(const std::string& key, bool fb) const { return has(key) ? get_bool(key) : fb; }
YamlMap YamlMap::get_map(const std::string& key) const { return YamlMap(get(key), file_, full_key(context_, key)); }

YAML::Node yaml_find_path(const YAML::Node& map, const std::string& dotted) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const auto dot = dotted.find('.');
  const YAML::Node& const_map = map;  // the const operator[] never inserts
  const YAML::Node child = const_map[dotted.substr(0, dot)];
  if (!child || dot == std::string::npos) return child;
  return yaml_find_path(child, dotted.substr(dot + 1));  // recursion, not reassignment: that would rebind
}

}  // namespace dlsim
