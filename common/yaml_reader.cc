#include "common/yaml_reader.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <utility>

#include "common/input_file.h"
#include "common/strings.h"

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

// The most nodes a document may stand for with its aliases expanded: 50 times the largest file dlsim ships
// (configs/hw/h100-sxm.yaml, about 21,000). Every reader walks the expanded tree.
constexpr uint64_t kMaxExpandedNodes = 1'000'000;

// The node count of `n` with every alias expanded, saturating above `kMaxExpandedNodes`. An alias is the anchored
// node itself (yaml-cpp shares it), so a collection is identified by its position and type and counted once:
// linear in the file, where a plain walk is exponential in the nesting of aliases ("billion laughs").
uint64_t expanded_nodes(const YAML::Node& n, std::map<std::pair<int, int>, uint64_t>& memo) {
  if (!n.IsMap() && !n.IsSequence()) return 1;
  const std::pair<int, int> id{n.Mark().pos, static_cast<int>(n.Type())};
  if (id.first >= 0) {
    if (auto it = memo.find(id); it != memo.end()) return it->second;
  }
  uint64_t total = 1;
  for (const auto& child : n) {
    total += n.IsMap() ? expanded_nodes(child.first, memo) + expanded_nodes(child.second, memo)
                       : expanded_nodes(child, memo);
    if (total > kMaxExpandedNodes) break;
  }
  if (id.first >= 0) memo[id] = total;
  return total;
}

template <typename Input>
YAML::Node parse_yaml(Input& in, const std::string& path) {
  YAML::Node root;
  try {
    root = YAML::Load(in);
  } catch (const YAML::Exception& e) {
    throw ConfigError(path, e.mark.line >= 0 ? e.mark.line + 1 : 0, "", "YAML syntax error: " + e.msg);
  }
  std::map<std::pair<int, int>, uint64_t> memo;
  if (expanded_nodes(root, memo) > kMaxExpandedNodes)
    throw ConfigError(path, yaml_line(root), "",
                      "the document stands for more than " + std::to_string(kMaxExpandedNodes) +
                          " nodes once its aliases (*name) are expanded: refused");
  // yaml-cpp keeps both entries of a repeated key and lookups find the first: a silent choice. YAML 1.2 says
  // keys are unique, so a repeat is an error naming both lines.
  reject_duplicate_keys(root, path, "");
  return root;
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
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    throw ConfigError(file, yaml_line(n), key, "expected a number, got '" + s + "'");
  return v;
}

bool yaml_to_bool(const YAML::Node& n, const std::string& file, const std::string& key) {
  std::string s = scalar_text(n);
  if (s == "true" || s == "True" || s == "yes") return true;
  if (s == "false" || s == "False" || s == "no") return false;
  throw ConfigError(file, yaml_line(n), key, "expected true or false, got '" + s + "'");
}

std::string yaml_to_string(const YAML::Node& n, const std::string& file, const std::string& key) {
  if (!n.IsScalar()) throw ConfigError(file, yaml_line(n), key, "expected a string");
  return n.Scalar();
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
    const std::string k = it->first.Scalar();
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
