#include "policies/pool/virtual_device_memory.h"

#include <catch2/catch.hpp>

using namespace dlsim;

TEST_CASE("VirtualDeviceMemory aligns to 512 B and refuses beyond capacity", "[vdm]") {
  VirtualDeviceMemory d(4096);
  auto a = d.malloc(1);
  REQUIRE(a);
  CHECK(*a == 0);
  CHECK(d.reserved() == 512);
  auto b = d.malloc(3000);  // 3072 after alignment
  REQUIRE(b);
  CHECK(*b == 512);
  CHECK(d.reserved() == 3584);
  CHECK_FALSE(d.malloc(1024));  // only 512 B left
  CHECK(d.malloc_calls() == 3);
  CHECK(d.bytes_malloced() == 3584);
  CHECK(d.peak_reserved() == 3584);
}

TEST_CASE("VirtualDeviceMemory reuses freed ranges first-fit and coalesces holes", "[vdm]") {
  VirtualDeviceMemory d(1 << 20);
  DevPtr a = *d.malloc(1024), b = *d.malloc(1024), c = *d.malloc(1024);
  (void)c;
  d.free(a);
  d.free(b);  // a and b merge into one 2048-B hole at 0
  CHECK(*d.malloc(2048) == 0);
  CHECK(d.free_calls() == 2);
  CHECK(d.bytes_freed() == 2048);
  CHECK(d.live_allocations() == 2);
  CHECK_THROWS_AS(d.free(12345), std::logic_error);
}

TEST_CASE("VirtualDeviceMemory: freeing the top lowers it so no external fragmentation builds up", "[vdm]") {
  VirtualDeviceMemory d(3 * 512);
  DevPtr a = *d.malloc(512), b = *d.malloc(512), c = *d.malloc(512);
  d.free(c);
  d.free(b);
  d.free(a);
  CHECK(d.reserved() == 0);
  CHECK(*d.malloc(3 * 512) == 0);
}
