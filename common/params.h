#pragma once
// Typed, self-describing parameters of a registered implementation (a pool, a planner, a policy, a kernel
// cost model). A ParamSpec describes a parameter: its name, type, default, meaning and valid values; Params
// holds values that passed those checks. An implementation declares each parameter once, bound to the member of
// its options struct (common/param_binding.h), which gives its ParamSpecs and converts Params to the struct's
// units; nothing else checks them, except what depends on the device (cnmem's "below the device capacity").
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/param_check.h"

namespace dlsim {

enum class ParamType { Int, Double, Bool, String };
const char* to_string(ParamType t);

struct ParamSpec {
  std::string name;
  ParamType type;
  ParamValue default_value;
  std::string description;
  ParamCheck check = {};  // the valid values; by default every value of the type
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

// Builds Params from a YAML mapping (keys other than `skip_key`, e.g. "name"), checking every key, type and
// value against the specs; errors name file, line, key ("<context>.<key>") and, for an unknown key, the valid
// parameters. `owner` names the implementation.
Params params_from_yaml(const std::vector<ParamSpec>& specs, const YAML::Node& map, const std::string& file,
                        const std::string& owner, const std::string& context, const std::string& skip_key = "name");

// Sets one parameter from text (command line "key=value"), checked against the specs like a YAML value; errors
// name "<command line>" and the key.
void set_param_from_text(const std::vector<ParamSpec>& specs, Params& p, const std::string& key,
                         const std::string& text, const std::string& owner);

// Sets one parameter from a value already typed (a command-line option such as --time-limit), checked against
// its spec; `option` is what the error names.
void set_param_checked(const std::vector<ParamSpec>& specs, Params& p, const std::string& key, ParamValue v,
                       const std::string& option);

// Checks every value of `p` against its spec, for Params that did not come through the readers above (built in
// code, read back from a plan file). Throws ConfigError (no file; the key) on the first bad one.
void check_params(const std::vector<ParamSpec>& specs, const Params& p, const std::string& owner);

}  // namespace dlsim
