#include <catch2/catch.hpp>

#include "policies/planners/planner.h"

using namespace dlsim;

TEST_CASE("every planner parameter's default passes its own check", "[planner][params]") {
  for (const auto& e : planner_registry().entries()) {
    INFO(e.name);
    CHECK_NOTHROW(check_params(e.params, Params(e.params), e.name));
  }
  CHECK(planner_registry().names() == std::vector<std::string>{"greedy-by-size", "best-fit", "optimal"});
}

TEST_CASE("a planner parameter out of range is refused before the planner is built", "[planner][params]") {
  const auto& optimal = planner_registry().get("optimal");
  Params p(optimal.params);
  p.set("node_limit", int64_t{-1});
  CHECK_THROWS_AS(optimal.factory(p), ConfigError);
  p = Params(optimal.params);
  p.set("preorder", std::string("random"));
  CHECK_THROWS_AS(optimal.factory(p), ConfigError);
  const auto& best_fit = planner_registry().get("best-fit");
  Params b(best_fit.params);
  b.set("order", std::string("diagonal"));
  CHECK_THROWS_AS(best_fit.factory(b), ConfigError);
}
