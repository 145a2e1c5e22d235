#include <catch2/catch.hpp>

#include "common/params.h"
#include "common/registry.h"

using namespace dlsim;

namespace {
std::vector<ParamSpec> specs() {
  return {{"init_size_mb", ParamType::Int, int64_t{0}, "first reservation", ParamCheck::at_least(0)},
          {"ratio", ParamType::Double, 0.5, "a ratio", ParamCheck::in_range(0, 1)},
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

TEST_CASE("a value out of its declared range is an error naming file, line and key where it is read") {
  try {
    params_from_yaml(specs(), YAML::Load("{name: cnmem,\n init_size_mb: -5}"), "exp.yaml", "cnmem", "pool");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "exp.yaml:2: 'pool.init_size_mb': must be >= 0, got -5");
  }
  Params p(specs());
  try {
    set_param_from_text(specs(), p, "ratio", "1.5", "cnmem");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "<command line>: 'ratio': must be in [0, 1], got 1.5");
  }
  CHECK(p.get_double("ratio") == 0.5);  // a refused value is not stored
  set_param_from_text(specs(), p, "ratio", "1", "cnmem");
  CHECK(p.get_double("ratio") == 1.0);
  CHECK_THROWS_AS(set_param_checked(specs(), p, "init_size_mb", int64_t{-1}, "--init"), ConfigError);
}

TEST_CASE("check_params catches a bad value in Params built in code") {
  Params p(specs());
  CHECK_NOTHROW(check_params(specs(), p, "cnmem"));
  p.set("init_size_mb", int64_t{-1});
  try {
    check_params(specs(), p, "cnmem");
    FAIL("expected an error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "init_size_mb");
    CHECK(std::string(e.what()).find("cnmem: must be >= 0, got -1") != std::string::npos);
  }
}

TEST_CASE("a registry's factory refuses parameters out of range, however they were built") {
  struct Thing { virtual ~Thing() = default; };
  Registry<Thing> reg("thing");
  int built = 0;
  reg.add({"a", "first", specs(), [&](const Params&) { ++built; return std::make_unique<Thing>(); }});
  Params p(specs());
  CHECK(reg.create("a", p) != nullptr);
  p.set("ratio", 2.0);
  CHECK_THROWS_AS(reg.create("a", p), ConfigError);
  CHECK(built == 1);  // the factory itself never ran on the bad value
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
