#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "common/config_error.h"
#include "common/sim_time.h"

using namespace dlsim;

TEST_CASE("a duration from rates is rounded, and one past 1e15 ns is an error naming the key") {
  CHECK(checked_duration_ns(1.4, "gpu.yaml", "hbm_bandwidth_gb_per_s", "kernel 'x'") == 1);
  CHECK(checked_duration_ns(1e15, "gpu.yaml", "hbm_bandwidth_gb_per_s", "kernel 'x'") == kMaxDurationNs);
  try {
    checked_duration_ns(2e15, "gpu.yaml", "hbm_bandwidth_gb_per_s", "kernel 'x'");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "gpu.yaml");
    CHECK(e.key() == "hbm_bandwidth_gb_per_s");
    CHECK(e.message().find("kernel 'x' would take 2e+06 s, above dlsim's limit of 1e15 ns") == 0);
  }
  // A tiny rate makes infinity, a zero one NaN: errors, never a cast of a value no int64 holds.
  CHECK_THROWS_AS(checked_duration_ns(std::numeric_limits<double>::infinity(), "f", "k", "w"), ConfigError);
  CHECK_THROWS_AS(checked_duration_ns(std::nan(""), "f", "k", "w"), ConfigError);
  CHECK_THROWS_AS(checked_duration_ns(-1, "f", "k", "w"), ConfigError);
}

TEST_CASE("the simulated clock stops with an error at 2^62 ns instead of wrapping") {
  CHECK(add_time(5, 7, "f") == 12);
  CHECK(add_time(kMaxSimTimeNs - 1, 1, "f") == kMaxSimTimeNs);
  CHECK_THROWS_WITH(add_time(kMaxSimTimeNs, 1, "gpu.yaml"), Catch::Contains("would pass 2^62 ns"));
  // Sums that wrap an int64 (the old iteration time of a huge launch overhead went negative) are caught too.
  CHECK_THROWS_AS(add_time(std::numeric_limits<int64_t>::max() - 1, kMaxDurationNs, "f"), ConfigError);
  CHECK_THROWS_AS(add_time(0, -1, "f"), ConfigError);
}
