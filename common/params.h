#pragma once
// Typed, self-describing parameters of a registered implementation (a pool, a planner, a policy...).
// A ParamSpec says a parameter's name, type, default and meaning; Params holds validated values.
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <string>
#include <variant>
#include <vector>

namespace dlsim {

enum class ParamType { Int, Double, Bool, String };
const char* to_string(ParamType t);

using ParamValue = std::variant<int64_t, double, bool, std::string>;
std::string to_string(const ParamValue& v);

struct ParamSpec {
  std::string name;
  ParamType type;
  ParamValue default_value;
  std::string description;
};

class Params {
 public:
  Params() = default;
  // All parameters at their defaults.
  explicit Params(const std::vector<ParamSpec>& specs);

  int64_t get_int(const std::string& name) const;
  double get_double(const std::string& name) const;  // an Int parameter converts
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  const std::map<std::string, ParamValue>& values() const { return values_; }
  // "a=1,b=true" in name order: for tables and CSV columns.
  std::string summary() const;

 private:
  std::map<std::string, ParamValue> values_;
};

// Builds Params from a YAML mapping (keys other than `skip_key`, e.g. "name"), checking every key and type
// against the specs; errors name file, line, key and the valid parameters. `owner` names the implementation.
Params params_from_yaml(const std::vector<ParamSpec>& specs, const YAML::Node& map, const std::string& file,
                        const std::string& owner, const std::string& context, const std::string& skip_key = "name");

// Sets one parameter from text (command line "key=value"), type-checked against the specs.
void set_param_from_text(const std::vector<ParamSpec>& specs, Params& p, const std::string& key,
                         const std::string& text, const std::string& owner);

}  // namespace dlsim
