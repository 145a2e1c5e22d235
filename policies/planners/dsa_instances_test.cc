// Every planner on every real instance of shared/data/dsa: valid placements, never below LOAD.
// The big instances only with the fast planners; `optimal` with a short limit on the small ones.
#include <catch2/catch.hpp>

#include <filesystem>

#include "policies/planners/instance_csv.h"
#include "policies/planners/load.h"
#include "policies/planners/placement_checker.h"
#include "policies/planners/planner.h"
#include "policies/planners/testing/shared_instances.h"

using namespace dlsim;

TEST_CASE("every planner gives a valid placement on every shared instance") {
  const auto files = dlsim::testing::shared_instance_files();
  if (files.empty()) {
    WARN("skipped: no instances under " << DLSIM_SHARED_DIR << "/data/dsa");
    return;
  }
  CHECK(files.size() >= 20);
  for (const auto& f : files) {
    INFO(f);
    const auto b = read_instance_csv(f);
    const uint64_t load = compute_load(b);
    for (const auto& entry : planner_registry().entries()) {
      Params p(entry.params);
      if (entry.name == "optimal") {
        if (b.size() > 2000) continue;
        p.set("time_limit_s", 0.2);
      }
      INFO(entry.name);
      const auto r = entry.factory(p)->plan(b);
      CHECK_FALSE(check_placement(b, r.offsets));
      CHECK(r.height == placement_height(b, r.offsets));
      CHECK(r.height >= load);
      CHECK(r.lower_bound >= load);
      CHECK(r.lower_bound <= r.height);
    }
  }
}
