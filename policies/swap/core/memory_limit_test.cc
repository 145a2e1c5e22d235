// The limit a swap policy aims at: limit_mb wins, then limit_fraction of the no-swap peak, then the device; a
// set limit never resolves to 0 bytes (0 reads as "no target" in the run's figures).
#include <catch2/catch.hpp>

#include "policies/swap/core/memory_limit.h"

using namespace dlsim;

TEST_CASE("a memory limit resolves to limit_mb, else to limit_fraction of the peak, else to the device") {
  MemoryLimit l;
  CHECK(l.resolve(1000, 5000) == 5000);
  l.fraction = 0.5;
  CHECK(l.resolve(1000, 5000) == 500);
  CHECK(l.resolve(1001, 5000) == 500);  // rounded down: the target is never above the fraction
  l.bytes = 300;
  CHECK(l.resolve(1000, 5000) == 300);
}

TEST_CASE("a limit_fraction that rounds below one byte resolves to one byte, not to 0 (no target)") {
  MemoryLimit l;
  l.fraction = 1e-12;
  CHECK(l.resolve(uint64_t{1} << 30, 5000) == 1);  // 0.001 bytes
  l.fraction = 0.4;
  CHECK(l.resolve(2, 5000) == 1);  // 0.8 bytes
  CHECK(l.resolve(0, 5000) == 1);  // an empty run: still a target, which it meets (0 live bytes <= 1)
}
