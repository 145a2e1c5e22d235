#include <catch2/catch.hpp>

#include "policies/planners/placement_checker.h"

using namespace dlsim;

TEST_CASE("the placement checker accepts touching ranges and rejects any shared byte") {
  const std::vector<DsaBuffer> b = {{10, 0, 4, 100}, {11, 2, 6, 50}, {12, 4, 8, 100}};
  CHECK_FALSE(check_placement(b, {0, 100, 0}));   // 10 and 12 never live together
  CHECK_FALSE(check_placement(b, {50, 0, 50}));   // 11 ends where 10 and 12 begin: no overlap
  auto bad = check_placement(b, {0, 99, 0});      // 11 shares byte 99 with 10
  REQUIRE(bad);
  CHECK(bad->find("buffer 11") != std::string::npos);
  CHECK(bad->find("buffer 10") != std::string::npos);
  CHECK_FALSE(check_placement(b, {0, 149, 199}));  // 11 at [149,199), 12 at [199,299): touching
  CHECK(check_placement(b, {0, 149, 150}));        // 11 and 12 share bytes while both live in [4,6)
  CHECK(check_placement(b, {0, 0}));              // wrong number of offsets
}
