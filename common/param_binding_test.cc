#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "common/config_error.h"
#include "common/param_binding.h"

using namespace dlsim;

namespace {

enum class Fit { Best, First };

struct Limit {
  double fraction = 0;
  static const ParamBindings<Limit>& parameters() {
    static const auto b = ParamBindings<Limit>().add("fraction", &Limit::fraction, "a fraction", ParamCheck::in_range(0, 1));
    return b;
  }
};

struct Inner {
  size_t length = 100;
};

// A pool's options: a default in each member initialiser, a member in bytes set from MiB, a choice, a member of a
// member, a part with bindings of its own whose default the outer struct changes, and a rule between two.
struct Options {
  uint64_t reserve_bytes = uint64_t{3} << 20;
  bool grow = true;
  Fit fit = Fit::First;
  Inner inner;
  Limit limit{0.25};
  static const ParamBindings<Options>& parameters() {
    static const auto b = ParamBindings<Options>()
        .add("reserve_mb", &Options::reserve_bytes, mebibytes(), "MiB reserved up front", ParamCheck::at_least(0))
        .add("grow", &Options::grow, "may grow")
        .add_choice("fit", &Options::fit, ParamChoices<Fit>{{"best", Fit::Best}, {"first", Fit::First}}, "how")
        .add("length", [](auto& o) -> auto& { return o.inner.length; }, "ops", ParamCheck::at_least(1))
        .add_all(&Options::limit, Limit::parameters())
        .rule([](const Options& o) {
          if (!o.grow && o.reserve_bytes == 0) throw ConfigError("", 0, "grow", "grow: false needs reserve_mb > 0");
        });
    return b;
  }
};

}  // namespace

TEST_CASE("a binding declares the spec: the name, the type from the member, the default from its initialiser") {
  const auto& s = Options::parameters().specs();
  REQUIRE(s.size() == 5);
  CHECK(s[0].name == "reserve_mb");
  CHECK(s[0].type == ParamType::Int);
  CHECK(std::get<int64_t>(s[0].default_value) == 3);  // 3 MiB in the member, shown in the parameter's unit
  CHECK(s[0].check.text() == ">= 0");
  CHECK(s[0].description == "MiB reserved up front");
  CHECK(s[1].type == ParamType::Bool);
  CHECK(std::get<bool>(s[1].default_value));
  CHECK(s[2].type == ParamType::String);
  CHECK(std::get<std::string>(s[2].default_value) == "first");
  CHECK(s[2].check.text() == "best, first");  // a choice's valid values are its names
  CHECK(s[3].type == ParamType::Int);
  CHECK(std::get<int64_t>(s[3].default_value) == 100);
  CHECK(s[4].name == "fraction");
  CHECK(std::get<double>(s[4].default_value) == 0.25);  // the outer struct's default for its part, not the part's
}

TEST_CASE("from_params sets every bound member, converting units and names") {
  Params p(Options::parameters().specs());
  CHECK(Options::parameters().from_params(p).reserve_bytes == uint64_t{3} << 20);
  p.set("reserve_mb", int64_t{256});
  p.set("fit", std::string("best"));
  p.set("length", int64_t{7});
  p.set("fraction", 0.5);
  const Options o = Options::parameters().from_params(p);
  CHECK(o.reserve_bytes == uint64_t{256} << 20);
  CHECK(o.fit == Fit::Best);
  CHECK(o.inner.length == 7);
  CHECK(o.limit.fraction == 0.5);
  CHECK(o.grow);
}

TEST_CASE("a bound parameter's range is checked where it is read, and a rule by from_params") {
  const auto& specs = Options::parameters().specs();
  try {
    params_from_yaml(specs, YAML::Load("{name: x,\n reserve_mb: -5}"), "exp.yaml", "x", "pool");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "exp.yaml:2: 'pool.reserve_mb': must be >= 0, got -5");
  }
  CHECK_THROWS_WITH(params_from_yaml(specs, YAML::Load("{fit: worst}"), "exp.yaml", "x", "pool"),
                    Catch::Contains("unknown value 'worst'; valid: best, first"));
  Params p(specs);
  p.set("grow", false);
  p.set("reserve_mb", int64_t{0});
  CHECK_THROWS_WITH(Options::parameters().from_params(p), Catch::Contains("grow: false needs reserve_mb > 0"));
}

TEST_CASE("a default its own check rejects, or its unit cannot express, is a programming error") {
  struct Bad {
    int64_t n = 0;
    uint64_t bytes = 1536 << 10;  // 1.5 MiB
  };
  CHECK_THROWS_AS(ParamBindings<Bad>().add("n", &Bad::n, "a count", ParamCheck::at_least(1)), std::logic_error);
  CHECK_THROWS_AS(ParamBindings<Bad>().add("mb", &Bad::bytes, mebibytes(), "a size"), std::logic_error);
}

TEST_CASE("the conversions of units") {
  CHECK(mebibytes_zero_unlimited().to_member(0) == UINT64_MAX);
  CHECK(mebibytes_zero_unlimited().to_member(20) == uint64_t{20} << 20);
  CHECK(mebibytes_zero_unlimited().to_param(UINT64_MAX) == 0);
  CHECK(microseconds_to_ns().to_member(1.5) == 1500);
  CHECK(microseconds_to_ns().to_param(2000) == 2.0);
}
