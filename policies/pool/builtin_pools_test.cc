#include <catch2/catch.hpp>

#include "policies/planners/planner.h"
#include "policies/pool/pool_policy.h"

using namespace dlsim;

TEST_CASE("every pool parameter's default passes its own check", "[pool][params]") {
  for (const auto& e : pool_registry().entries()) {
    INFO(e.name);
    CHECK_NOTHROW(check_params(e.params, Params(e.params), e.name));
  }
}

TEST_CASE("the planned pool offers exactly the registered planners", "[pool][params]") {
  const auto& planned = pool_registry().get("planned");
  Params p(planned.params);
  for (const auto& name : planner_registry().names()) {
    p.set("planner", name);
    CHECK_NOTHROW(check_params(planned.params, p, "planned"));
  }
  p.set("planner", std::string("first-fit"));
  CHECK_THROWS_AS(check_params(planned.params, p, "planned"), ConfigError);
}
