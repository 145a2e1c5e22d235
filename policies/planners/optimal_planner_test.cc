#include <catch2/catch.hpp>

#include <limits>

#include "common/config_error.h"
#include "policies/planners/capacity_search.h"
#include "policies/planners/generated_instances.h"
#include "policies/planners/load.h"
#include "policies/planners/optimal_planner.h"
#include "policies/planners/placement_checker.h"
#include "policies/planners/testing/brute_force_optimum.h"

using namespace dlsim;
using dlsim::testing::brute_force_optimum;

namespace {

std::vector<DsaBuffer> random_tiny(uint64_t seed) {
  uint64_t s = seed * 2654435761u + 1;
  auto next = [&](uint64_t n) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return (s >> 33) % n;
  };
  std::vector<DsaBuffer> b;
  for (int i = 0; i < 6; ++i) {
    const int64_t lo = static_cast<int64_t>(next(6));
    b.push_back({i, lo, lo + 1 + static_cast<int64_t>(next(4)), 1 + next(4)});
  }
  return b;
}

}  // namespace

TEST_CASE("optimal matches exhaustive enumeration on tiny random instances and proves it") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const auto b = random_tiny(seed);
    INFO("seed " << seed);
    const auto r = plan_optimal(b, {});
    CHECK_FALSE(check_placement(b, r.offsets));
    CHECK(r.optimal);
    CHECK(r.height == brute_force_optimum(b, 64));
    CHECK(r.lower_bound == r.height);
  }
}

TEST_CASE("every preorder and the decomposition agree with exhaustive enumeration on wider random instances") {
  for (uint64_t seed = 1; seed <= 25; ++seed) {
    uint64_t st = seed * 977 + 3;
    auto next = [&](uint64_t n) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      return (st >> 33) % n;
    };
    std::vector<DsaBuffer> b;  // spread over 12 steps so that placements cut the instance apart
    for (int i = 0; i < 7; ++i) {
      const int64_t lo = static_cast<int64_t>(next(10));
      b.push_back({i, lo, lo + 1 + static_cast<int64_t>(next(4)), 1 + next(5)});
    }
    const uint64_t opt = brute_force_optimum(b, 64);
    INFO("seed " << seed << " optimum " << opt);
    for (Preorder p : {Preorder::RoundRobin, Preorder::WidthAreaTotal, Preorder::TotalAreaWidth, Preorder::TotalWidthArea}) {
      const auto at_opt = search_capacity(b, opt, {}, p);
      REQUIRE(at_opt.outcome == SearchOutcome::Found);
      CHECK_FALSE(check_placement(b, at_opt.offsets));
      CHECK(placement_height(b, at_opt.offsets) <= opt);
      CHECK(search_capacity(b, opt - 1, {}, p).outcome == SearchOutcome::Infeasible);
    }
  }
}

TEST_CASE("the capacity search finds perfect packings and refuses capacities below LOAD") {
  const auto b = guillotine_instance(40, 3);
  const auto found = search_capacity(b, 1000, {});
  REQUIRE(found.outcome == SearchOutcome::Found);
  CHECK_FALSE(check_placement(b, found.offsets));
  CHECK(placement_height(b, found.offsets) == 1000);
  CHECK(search_capacity(b, 999, {}).outcome == SearchOutcome::Infeasible);
}

TEST_CASE("optimal reaches LOAD on generated perfect packings") {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const auto b = guillotine_instance(60, seed);
    OptimalOptions o;
    o.time_limit_s = 5;
    const auto r = plan_optimal(b, o);
    CHECK_FALSE(check_placement(b, r.offsets));
    CHECK(r.optimal);
    CHECK(r.height == 1000);
  }
}

TEST_CASE("with a node limit the optimal planner is deterministic and reports what it proved") {
  const auto b = guillotine_instance(150, 4);
  OptimalOptions o;
  o.time_limit_s = 600;
  o.node_limit = 20000;
  const auto r1 = plan_optimal(b, o), r2 = plan_optimal(b, o);
  CHECK(r1.offsets == r2.offsets);
  CHECK(r1.nodes == r2.nodes);
  CHECK(r1.nodes <= 20000);
  CHECK_FALSE(check_placement(b, r1.offsets));
  CHECK(r1.lower_bound <= r1.height);
  CHECK(r1.optimal == (r1.lower_bound == r1.height));
  CHECK(r1.lower_bound >= compute_load(b));
}

TEST_CASE("optimal planner parameters are checked") {
  OptimalOptions o;
  o.time_limit_s = 0;
  CHECK_THROWS_AS(plan_optimal(guillotine_instance(5, 1), o), ConfigError);
  for (double bad : {1e10, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}) {
    o.time_limit_s = bad;
    CHECK_THROWS_WITH(plan_optimal(guillotine_instance(5, 1), o), Catch::Contains("(0, 1e9]"));
  }
}

TEST_CASE("optimal places every buffer even when its time runs out before the first placement") {
  // A limit far shorter than one best-fit pass over 3,000 buffers: the deadline has passed before the first
  // heuristic finishes (regression: "placement has 0 offsets", a segfault inside the planned pool).
  const auto b = guillotine_instance(3000, 7);
  for (double limit : {1e-9, 1e-5}) {
    OptimalOptions o;
    o.time_limit_s = limit;
    const auto r = plan_optimal(b, o);
    REQUIRE(r.offsets.size() == b.size());
    CHECK_FALSE(check_placement(b, r.offsets));
    CHECK(r.height >= compute_load(b));
  }
  OptimalOptions longest;
  longest.time_limit_s = kMaxPlannerTimeLimitS;  // the deadline must not wrap into the past
  longest.node_limit = 1000;
  const auto r = plan_optimal(guillotine_instance(60, 2), longest);
  CHECK_FALSE(check_placement(guillotine_instance(60, 2), r.offsets));
  CHECK(r.optimal);
}
