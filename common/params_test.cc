#include <catch2/catch.hpp>

#include "common/params.h"
#include "common/registry.h"

using namespace dlsim;

namespace {
std::vector<ParamSpec> specs() {
  return {{"init_size_mb", ParamType::Int, int64_t{0}, "first reservation"},
          {"ratio", ParamType::Double, 0.5, "a ratio"},
          {"grow", ParamType::Bool, true, "may grow"}};
}
}  // namespace

TEST_CASE("params default and parse from YAML with typed errors") {
  Params d(specs());
  CHECK(d.get_int("init_size_mb") == 0);
  CHECK(d.get_double("ratio") == 0.5);
  CHECK(d.get_bool("grow"));

  auto p = params_from_yaml(specs(), YAML::Load("{name: cnmem, init_size_mb: 256, grow: false}"), "x.yaml", "cnmem", "pool");
  CHECK(p.get_int("init_size_mb") == 256);
  CHECK_FALSE(p.get_bool("grow"));
  CHECK(p.summary() == "grow=false,init_size_mb=256,ratio=0.5");

  try {
    params_from_yaml(specs(), YAML::Load("{name: cnmem,\n init_size: 3}"), "x.yaml", "cnmem", "pool");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 2);
    CHECK(e.key() == "pool.init_size");
    CHECK(std::string(e.what()).find("init_size_mb (int)") != std::string::npos);
  }
  CHECK_THROWS_AS(params_from_yaml(specs(), YAML::Load("{init_size_mb: abc}"), "x.yaml", "cnmem", "pool"), ConfigError);
}

TEST_CASE("registry lists valid names for an unknown one") {
  struct Thing { virtual ~Thing() = default; };
  Registry<Thing> reg("pool");
  reg.add({"a", "first", {}, [](const Params&) { return std::make_unique<Thing>(); }});
  reg.add({"b", "second", {}, [](const Params&) { return std::make_unique<Thing>(); }});
  CHECK(reg.create("b", Params{}) != nullptr);
  try {
    reg.get("c", "e.yaml", 4, "pool");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "e.yaml:4: 'pool': unknown pool 'c'; valid: a, b");
  }
}
