#include "common/params.h"

#include <stdexcept>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"

namespace dlsim {

const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::Int: return "int";
    case ParamType::Double: return "double";
    case ParamType::Bool: return "bool";
    case ParamType::String: return "string";
  }
  return "?";
}

Params::Params(const std::vector<ParamSpec>& specs) {
  for (const auto& s : specs) values_[s.name] = s.default_value;
}

namespace {
const ParamValue& lookup(const std::map<std::string, ParamValue>& m, const std::string& name) {
  auto it = m.find(name);
  if (it == m.end()) throw std::logic_error("parameter '" + name + "' is not declared");
  return it->second;
}
}  // namespace

int64_t Params::get_int(const std::string& name) const { return std::get<int64_t>(lookup(values_, name)); }
double Params::get_double(const std::string& name) const {
  const auto& v = lookup(values_, name);
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}
bool Params::get_bool(const std::string& name) const { return std::get<bool>(lookup(values_, name)); }
const std::string& Params::get_string(const std::string& name) const { return std::get<std::string>(lookup(values_, name)); }

std::string Params::summary() const {
  std::string s;
  for (const auto& [k, v] : values_) {
    if (!s.empty()) s += ",";
    s += k + "=" + to_string(v);
  }
  return s;
}

namespace {
const ParamSpec* find_spec(const std::vector<ParamSpec>& specs, const std::string& key) {
  for (const auto& s : specs)
    if (s.name == key) return &s;
  return nullptr;
}
std::string valid_names(const std::vector<ParamSpec>& specs) {
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.name + " (" + to_string(s.type) + ")");
  return names.empty() ? std::string("none") : join(names);
}
ParamValue convert(const ParamSpec& spec, const YAML::Node& n, const std::string& file, const std::string& key) {
  switch (spec.type) {
    case ParamType::Int: return yaml_to_int(n, file, key);
    case ParamType::Double: return yaml_to_double(n, file, key);
    case ParamType::Bool: return yaml_to_bool(n, file, key);
    case ParamType::String: return yaml_to_string(n, file, key);
  }
  return {};
}
}  // namespace

Params params_from_yaml(const std::vector<ParamSpec>& specs, const YAML::Node& map, const std::string& file,
                        const std::string& owner, const std::string& context, const std::string& skip_key) {
  Params p(specs);
  if (!map || map.IsNull()) return p;
  if (!map.IsMap()) throw ConfigError(file, yaml_line(map), context, "expected a mapping of parameters");
  for (auto it = map.begin(); it != map.end(); ++it) {
    const std::string key = yaml_key(it->first, file, context);
    if (key == skip_key) continue;
    const std::string full = context.empty() ? key : context + "." + key;
    const ParamSpec* spec = find_spec(specs, key);
    if (!spec)
      throw ConfigError(file, yaml_line(it->first), full,
                        "'" + owner + "' has no parameter '" + key + "'; its parameters: " + valid_names(specs));
    ParamValue v = convert(*spec, it->second, file, full);
    if (auto why = spec->check.violation(v)) throw ConfigError(file, yaml_line(it->second), full, *why);
    p.set(key, std::move(v));
  }
  return p;
}

void set_param_from_text(const std::vector<ParamSpec>& specs, Params& p, const std::string& key,
                         const std::string& text, const std::string& owner) {
  const ParamSpec* spec = find_spec(specs, key);
  if (!spec)
    throw ConfigError("<command line>", 0, key,
                      "'" + owner + "' has no parameter '" + key + "'; its parameters: " + valid_names(specs));
  ParamValue v = convert(*spec, YAML::Node(text), "<command line>", key);
  if (auto why = spec->check.violation(v)) throw ConfigError("<command line>", 0, key, *why);
  p.set(key, std::move(v));
}

void set_param_checked(const std::vector<ParamSpec>& specs, Params& p, const std::string& key, ParamValue v,
                       const std::string& option) {
  const ParamSpec* spec = find_spec(specs, key);
  if (!spec) throw std::logic_error("parameter '" + key + "' is not declared");
  if (auto why = spec->check.violation(v)) throw ConfigError("<command line>", 0, option, *why);
  p.set(key, std::move(v));
}

void check_params(const std::vector<ParamSpec>& specs, const Params& p, const std::string& owner) {
  for (const auto& [key, v] : p.values()) {
    const ParamSpec* spec = find_spec(specs, key);
    if (!spec) throw ConfigError("", 0, key, "'" + owner + "' has no parameter '" + key + "'");
    if (auto why = spec->check.violation(v)) throw ConfigError("", 0, key, owner + ": " + *why);
  }
}

}  // namespace dlsim
