#include <catch2/catch.hpp>

#include "policies/planners/generated_instances.h"
#include "policies/planners/load.h"

using namespace dlsim;

TEST_CASE("LOAD is the largest live total, with half-open lifetimes") {
  // [0,2) 5 and [2,4) 7 never live together; [1,3) 3 overlaps both.
  std::vector<DsaBuffer> b = {{1, 0, 2, 5}, {2, 2, 4, 7}, {3, 1, 3, 3}};
  CHECK(compute_load(b) == 10);
  b.push_back({4, 3, 4, 1});
  CHECK(compute_load(b) == 10);  // at t=3: 7 + 1
  b.push_back({5, 2, 3, 4});
  CHECK(compute_load(b) == 14);  // at t=2: 7 + 3 + 4
  CHECK(compute_load({}) == 0);
}

TEST_CASE("LOAD of a guillotine instance is its capacity") {
  for (uint64_t seed = 1; seed <= 5; ++seed) CHECK(compute_load(guillotine_instance(200, seed)) == 1000);
}
