#pragma once
// A registry of named, self-describing implementations of one interface (SimGrid's model registry idea):
// each entry has a name, a one-line description, typed parameters with defaults and a factory.
// Asking for an unknown name throws a ConfigError that lists the valid names.
//
// Entries are added by explicit registration functions (see e.g. policies/pool/builtin_pools.cc), not static
// initialisers: static libraries drop unreferenced objects, and an explicit list makes the order deterministic.
//
// Adding an implementation: bind each parameter once to its options' member (common/param_binding.h), beside it,
//   void register_my_pool(PoolRegistry& r) {                       // policies/pool/my_pool.cc
//     r.add({"my-pool", "one line for dlsim list", MyPoolOptions::parameters().specs(),
//            [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
//              return std::make_unique<MyPool>(d, MyPoolOptions::parameters().from_params(p)); }});
//   }
// and call register_my_pool from the list in policies/pool/builtin_pools.cc.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "common/params.h"
#include "common/strings.h"

namespace dlsim {

template <class T, class... Args>
struct RegistryEntry {
  std::string name;
  std::string description;
  std::vector<ParamSpec> params;
  std::function<std::unique_ptr<T>(const Params&, Args...)> factory;
};

template <class T, class... Args>
class Registry {
 public:
  using Entry = RegistryEntry<T, Args...>;

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  // The factory of an added entry checks every parameter against its spec first, whatever path the Params
  // took (YAML and --param are checked when read; Params built in code or read from a plan file are not).
  void add(Entry e) {
    e.factory = [inner = std::move(e.factory), specs = e.params, name = e.name](const Params& p, Args... args) {
      check_params(specs, p, name);
      return inner(p, args...);
    };
    entries_.push_back(std::move(e));
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

  const Entry* find(const std::string& name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  std::vector<std::string> names() const {
    std::vector<std::string> n;
    for (const auto& e : entries_) n.push_back(e.name);
    return n;
  }

  // Throws ConfigError(file, line, key) listing the valid names when `name` is unknown.
  const Entry& get(const std::string& name, const std::string& file = "", int line = 0,
                   const std::string& key = "") const {
    if (const Entry* e = find(name)) return *e;
    throw ConfigError(file, line, key, "unknown " + kind_ + " '" + name + "'; valid: " + join(names()));
  }

  std::unique_ptr<T> create(const std::string& name, const Params& p, Args... args) const {
    return get(name).factory(p, args...);
  }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace dlsim
