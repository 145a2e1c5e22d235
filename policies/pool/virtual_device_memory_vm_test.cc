// VirtualDeviceMemory's virtual-memory calls (cuMemAddressReserve / cuMemMap / cuMemUnmap / cuMemAddressFree).
#include <catch2/catch.hpp>

#include "policies/pool/pool_accounting.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;

TEST_CASE("VirtualDeviceMemory reserves address ranges high above malloc addresses, at no capacity",
          "[vdm][vmm]") {
  VirtualDeviceMemory d(64 * kMiB);
  REQUIRE(d.supports_virtual_memory());
  const DevPtr m = *d.malloc(10 * kMiB);
  const auto a = d.reserve_address_range(100 * kMiB);  // more than the capacity: address space is not memory
  const auto b = d.reserve_address_range(3 * kMiB);    // rounded up to the 2 MiB granularity
  REQUIRE(a);
  REQUIRE(b);
  CHECK(m < VirtualDeviceMemory::kAddressRangeBase);
  CHECK(*a == VirtualDeviceMemory::kAddressRangeBase);
  CHECK(*b == *a + 100 * kMiB);
  CHECK(d.reserved_address_bytes() == 104 * kMiB);
  CHECK(d.reserved() == 10 * kMiB);
  d.release_address_range(*a);
  CHECK(*d.reserve_address_range(50 * kMiB) == *a);  // the lowest gap is reused
  CHECK(d.address_ranges() == 2);
  CHECK_THROWS_AS(d.release_address_range(*a + 2 * kMiB), std::logic_error);
}

TEST_CASE("VirtualDeviceMemory maps pages into reserved ranges up to the capacity and unmaps whole mappings",
          "[vdm][vmm]") {
  VirtualDeviceMemory d(64 * kMiB);
  const DevPtr r = *d.reserve_address_range(200 * kMiB);
  const DevPtr m = *d.malloc(20 * kMiB);
  (void)m;
  REQUIRE(d.map_pages(r, 20 * kMiB));
  REQUIRE(d.map_pages(r + 20 * kMiB, 20 * kMiB));
  CHECK(d.reserved() == 60 * kMiB);  // malloc'd and mapped bytes together
  CHECK(d.mapped() == 40 * kMiB);
  CHECK_FALSE(d.map_pages(r + 40 * kMiB, 20 * kMiB));  // 80 MiB > 64 MiB: nothing mapped
  CHECK(d.map_pages(r + 40 * kMiB, 4 * kMiB));
  CHECK(d.peak_reserved() == 64 * kMiB);
  CHECK(d.map_calls() == 3);
  CHECK(d.bytes_mapped() == 44 * kMiB);
  CHECK_FALSE(d.malloc(kMiB));  // capacity is shared with malloc

  CHECK_THROWS_AS(d.map_pages(r, 2 * kMiB), std::logic_error);                 // already mapped
  CHECK_THROWS_AS(d.map_pages(r + 200 * kMiB, 2 * kMiB), std::logic_error);    // outside the range
  CHECK_THROWS_AS(d.map_pages(r + 50 * kMiB, kMiB), std::logic_error);         // off the granularity
  CHECK_THROWS_AS(d.unmap_pages(r, 10 * kMiB), std::logic_error);              // part of a mapping
  CHECK_THROWS_AS(d.release_address_range(r), std::logic_error);               // pages still mapped

  d.unmap_pages(r, 40 * kMiB);  // two whole mappings back to back
  CHECK(d.reserved() == 24 * kMiB);
  CHECK(d.unmap_calls() == 1);
  CHECK(d.bytes_unmapped() == 40 * kMiB);
  CHECK(d.map_pages(r, 20 * kMiB));  // the freed pages can be mapped again
  d.unmap_pages(r, 20 * kMiB);
  d.unmap_pages(r + 40 * kMiB, 4 * kMiB);
  d.release_address_range(r);
  CHECK(d.mapped() == 0);
  CHECK(d.reserved() == 20 * kMiB);
  CHECK(d.reserved_address_bytes() == 0);
}
