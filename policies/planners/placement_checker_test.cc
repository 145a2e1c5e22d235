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

TEST_CASE("the placement checker rejects a buffer whose end wraps past 2^64") {
  // The wrapped end made buffer 2 look like [2^64 - 2, 2^63 - 3): an overlap the sweep could not see.
  const uint64_t big = (uint64_t{1} << 63) - 1;
  const std::vector<DsaBuffer> b = {{0, 0, 10, big}, {1, 0, 10, big}, {2, 0, 10, big}};
  auto bad = check_placement(b, {0, big, 2 * big});
  REQUIRE(bad);
  CHECK(*bad == "buffer 2 at offset 18446744073709551614 of 9223372036854775807 bytes ends past 2^64");
}
