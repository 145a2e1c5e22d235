#include "validate/gpu/arena_device_memory.h"

#include <catch2/catch.hpp>

#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;

TEST_CASE("arena: first fit at 512-byte alignment, coalescing on free") {
  ArenaDeviceMemory m(1 << 20, 1 << 20);
  auto a = m.malloc(100);
  auto b = m.malloc(1000);
  auto c = m.malloc(512);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  CHECK(*a == 0);
  CHECK(*b == 512);   // 100 rounds up to 512
  CHECK(*c == 1536);  // 1000 rounds up to 1024
  CHECK(m.reserved() == 2048);
  m.free(*a);
  m.free(*b);  // coalesces with the hole of a: one hole of 1536 bytes at 0
  auto d = m.malloc(1500);
  REQUIRE(d);
  CHECK(*d == 0);
  CHECK(m.high_water_mark() == 2048);
  CHECK(m.peak_reserved() == 2048);
  CHECK(m.malloc_calls() == 4);
  CHECK(m.free_calls() == 2);
  CHECK_THROWS_AS(m.free(12345), std::logic_error);
}

TEST_CASE("arena: out of memory by capacity exactly as the simulated device, fragmentation counted apart") {
  ArenaDeviceMemory m(8192, 4096);
  auto a = m.malloc(2048);
  auto b = m.malloc(2048);
  REQUIRE(a);
  REQUIRE(b);
  CHECK_FALSE(m.malloc(1));  // capacity reached: the sim's OOM
  CHECK(m.arena_fragmentation_failures() == 0);

  // Capacity allows 3 KiB, but the arena's holes are 1 KiB pieces: a fragmentation failure.
  ArenaDeviceMemory f(4096, 4096);
  std::vector<DevPtr> p;
  for (int i = 0; i < 4; ++i) p.push_back(*f.malloc(1024));
  f.free(p[0]);
  f.free(p[2]);
  CHECK(f.reserved() == 2048);
  CHECK_FALSE(f.malloc(2048));
  CHECK(f.arena_fragmentation_failures() == 1);
  CHECK_THROWS_AS(ArenaDeviceMemory(4096, 0), std::invalid_argument);
}

TEST_CASE("arena: smaller than the modelled capacity, as on a real H100 (capacity 80594 MiB, 79528 MiB free)") {
  // The capacity still decides out of memory as in the simulator; a request it allows that the smaller arena
  // cannot hold fails and is counted as an arena failure, never as the model's OOM.
  ArenaDeviceMemory m(4096, 8192);
  CHECK(m.arena_bytes() == 4096);
  auto a = m.malloc(3072);
  REQUIRE(a);
  CHECK_FALSE(m.malloc(2048));  // 5 KiB <= capacity 8 KiB, but only 1 KiB of arena is left
  CHECK(m.arena_fragmentation_failures() == 1);
  CHECK_FALSE(m.malloc(9000));  // over the capacity: the model's OOM, not an arena failure
  CHECK(m.arena_fragmentation_failures() == 1);
  m.free(*a);
  CHECK(m.malloc(4096));
}

TEST_CASE("arena: hands out the same offsets as VirtualDeviceMemory for the same call sequence") {
  // The pool above must see identical answers on both backends while the arena is large enough.
  ArenaDeviceMemory arena(uint64_t{1} << 30, uint64_t{1} << 28);
  VirtualDeviceMemory sim(uint64_t{1} << 28);
  std::vector<DevPtr> live_a, live_s;
  uint64_t seed = 7;
  for (int i = 0; i < 2000; ++i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const bool do_free = !live_a.empty() && (seed >> 60) < 7;
    if (do_free) {
      const size_t k = (seed >> 20) % live_a.size();
      arena.free(live_a[k]);
      sim.free(live_s[k]);
      live_a.erase(live_a.begin() + static_cast<long>(k));
      live_s.erase(live_s.begin() + static_cast<long>(k));
    } else {
      const uint64_t bytes = 1 + (seed >> 33) % (1 << 20);
      auto a = arena.malloc(bytes);
      auto s = sim.malloc(bytes);
      REQUIRE(a.has_value() == s.has_value());
      if (!a) continue;
      REQUIRE(*a == *s);
      live_a.push_back(*a);
      live_s.push_back(*s);
    }
  }
  CHECK(arena.peak_reserved() == sim.peak_reserved());
  CHECK(arena.bytes_malloced() == sim.bytes_malloced());
  CHECK(arena.bytes_freed() == sim.bytes_freed());
}
