#include <catch2/catch.hpp>

#include "experiment/sweep/shard.h"
#include "common/config_error.h"

using namespace dlsim;

TEST_CASE("the shards of a sweep cover every point exactly once") {
  for (size_t n : {1, 2, 3, 7}) {
    for (size_t point = 0; point < 50; ++point) {
      int owners = 0;
      for (size_t i = 1; i <= n; ++i) owners += parse_shard(std::to_string(i) + "/" + std::to_string(n)).owns(point);
      CHECK(owners == 1);
    }
  }
  CHECK(parse_shard("2/8").folder() == "shard-2-of-8");
}

TEST_CASE("a shard that does not exist is an error naming --shard") {
  CHECK_THROWS_WITH(parse_shard("3/2"), "<command line>: '--shard': shard 3 of 2 does not exist: I must be between 1 and N (3/2)");
  CHECK_THROWS_WITH(parse_shard("0/2"), Catch::Contains("shard 0 of 2 does not exist"));
  CHECK_THROWS_WITH(parse_shard("1/0"), Catch::Contains("does not exist"));
  CHECK_THROWS_WITH(parse_shard("2"), Catch::Contains("expected I/N"));
  CHECK_THROWS_WITH(parse_shard("a/b"), Catch::Contains("expected I/N"));
  CHECK_THROWS_WITH(parse_shard("-1/2"), Catch::Contains("expected I/N"));
}
