// The capacity search's optional rules (SearchRules): switched off or on, the search proves what exhaustive
// enumeration says, and each rule changes the search where it is meant to.
#include <catch2/catch.hpp>

#include <string>

#include "policies/planners/capacity_search.h"
#include "policies/planners/generated_instances.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/placement_checker.h"
#include "policies/planners/testing/brute_force_optimum.h"
#include "policies/planners/testing/shared_instances.h"

using namespace dlsim;

namespace {

// 8 buffers over 12 steps, so that placements cut the instance apart (decompositions, parts reordered).
std::vector<DsaBuffer> rules_test_instance(uint64_t seed) {
  uint64_t st = seed * 7919 + 11;
  auto next = [&](uint64_t n) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    return (st >> 33) % n;
  };
  std::vector<DsaBuffer> b;
  for (int i = 0; i < 8; ++i) {
    const int64_t lo = static_cast<int64_t>(next(10));
    b.push_back({i, lo, lo + 1 + static_cast<int64_t>(next(4)), 1 + next(5)});
  }
  return b;
}

SearchRules all_but(const std::string& rule) {
  SearchRules r;
  if (rule == "raised_stack") r.raised_stack = false;
  if (rule == "part_preorder") r.part_preorder = false;
  return r;
}

}  // namespace

TEST_CASE("with any rule switched off the search proves what exhaustive enumeration says") {
  for (const std::string rule : {"none", "raised_stack", "part_preorder"}) {
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      const auto b = rules_test_instance(seed);
      const uint64_t opt = testing::brute_force_optimum(b, 64);
      INFO(rule << " off, seed " << seed << ", optimum " << opt);
      for (Preorder p : {Preorder::RoundRobin, Preorder::WidthAreaTotal, Preorder::TotalWidthArea}) {
        const auto found = search_capacity(b, opt, {}, p, all_but(rule));
        REQUIRE(found.outcome == SearchOutcome::Found);
        CHECK_FALSE(check_placement(b, found.offsets));
        CHECK(placement_height(b, found.offsets) <= opt);
        CHECK(search_capacity(b, opt - 1, {}, p, all_but(rule)).outcome == SearchOutcome::Infeasible);
      }
    }
  }
}

TEST_CASE("the raised stack cuts the search on perfect packings, which it still finds") {
  // Generated perfect packings (OPT = LOAD = 1000) where the rule fires: one order, no restarts, to the first
  // placement at 1000. Without the rule these take 73 and 309 nodes.
  for (const auto& [n, seed] : {std::pair<size_t, uint64_t>{60, 16}, {120, 16}}) {
    const auto b = guillotine_instance(n, seed);
    INFO(n << " buffers, seed " << seed);
    const auto with = search_capacity(b, 1000, {}, Preorder::WidthAreaTotal);
    const auto without = search_capacity(b, 1000, {}, Preorder::WidthAreaTotal, all_but("raised_stack"));
    REQUIRE(with.outcome == SearchOutcome::Found);
    REQUIRE(without.outcome == SearchOutcome::Found);
    CHECK_FALSE(check_placement(b, with.offsets));
    CHECK(placement_height(b, with.offsets) == 1000);
    CHECK(with.nodes == n);  // no backtracking at all
    CHECK(with.nodes < without.nodes);
  }
}

TEST_CASE("a fresh preorder per part finds minimalloc I in the TWA order quickly") {
  // An ordering rule, not a pruning one: checked on the instance that shows it (MiniMalloc's I at LOAD).
  std::string file;
  for (const auto& f : dlsim::testing::shared_instance_files())
    if (f.find("minimalloc/I.") != std::string::npos) file = f;
  if (file.empty()) {
    WARN("skipped: no minimalloc/I under " << DLSIM_SHARED_DIR << "/data/dsa");
    return;
  }
  const auto b = read_instance_csv(file);
  SearchLimits lim;
  lim.node_limit = 20000;
  const auto with = search_capacity(b, 1048576, lim, Preorder::TotalWidthArea);
  REQUIRE(with.outcome == SearchOutcome::Found);
  CHECK_FALSE(check_placement(b, with.offsets));
  CHECK(placement_height(b, with.offsets) == 1048576);
  CHECK(with.nodes < 5000);
  CHECK(search_capacity(b, 1048576, lim, Preorder::TotalWidthArea, all_but("part_preorder")).outcome ==
        SearchOutcome::Stopped);
}
