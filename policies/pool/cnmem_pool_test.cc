#include "policies/pool/cnmem_pool.h"
#include "common/byte_units.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "policies/pool/pool_accounting.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;

namespace {

CnmemOptions with_init(uint64_t mb, bool cannot_grow = false, bool cannot_steal = false) {
  CnmemOptions o;
  o.init_size_bytes = mb * kMiB;
  o.cannot_grow = cannot_grow;
  o.cannot_steal = cannot_steal;
  return o;
}

CheckedPool::PoolFactory cnmem(const CnmemOptions& o) {
  return [o](DeviceMemory& d) { return std::make_unique<CnmemPool>(d, o); };
}

uint64_t rep(const PoolPolicy& p, const char* key) { return p.report()[key].get<uint64_t>(); }
}  // namespace

TEST_CASE("cnmem reserves half the device by default, in one cudaMalloc", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(CnmemOptions{}));
  CHECK(dev.malloc_calls() == 1);
  CHECK(dev.reserved() == 512 * kMiB);
  auto a = pool.allocate({1, 0});
  REQUIRE(a);
  CHECK(pool.stats().allocated_bytes == 512);  // 512-B granularity
  CHECK(dev.malloc_calls() == 1);
  pool.deallocate(*a);
  pool.check_all_freed(512 * kMiB);  // cnmem never gives memory back
}

TEST_CASE("cnmem's default is half of totalGlobalMem, the context's share included", "[pool][cnmem]") {
  // Real cnmemInit reads cudaDeviceProp::totalGlobalMem, which counts the memory the CUDA context already took.
  VirtualDeviceMemory dev(kGiB - 256 * kMiB, kGiB);
  CheckedPool pool(dev, cnmem(CnmemOptions{}));
  CHECK(dev.reserved() == 512 * kMiB);
  // A size below totalGlobalMem passes cnmemInit's check but does not fit beside the context: cudaMalloc fails.
  VirtualDeviceMemory small(kGiB - 256 * kMiB, kGiB);
  CHECK_THROWS_WITH(CnmemPool(small, with_init(900)), Catch::Contains("cudaMalloc of the initial"));
  VirtualDeviceMemory same(kGiB - 256 * kMiB, kGiB);
  CHECK_THROWS_WITH(CnmemPool(same, with_init(1024)), Catch::Contains("below the device's total memory"));
}

TEST_CASE("cnmem splits low and picks the best fit, lowest address on ties", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(64)));
  const DevPtr base = *pool.allocate({4096, 0});
  const DevPtr b = *pool.allocate({1000, 0});  // 1024
  const DevPtr c = *pool.allocate({2048, 0});
  const DevPtr d = *pool.allocate({1, 0});
  CHECK(b == base + 4096);
  CHECK(c == base + 5120);
  CHECK(d == base + 7168);
  pool.deallocate(base);
  pool.deallocate(c);
  // Free list: [base, 4096], [c, 2048], [d+512, rest]: 2000 B (2048) fits c exactly, 1500 B (1536) fits base best.
  CHECK(*pool.allocate({2000, 0}) == c);
  CHECK(*pool.allocate({1500, 0}) == base);
  CHECK(*pool.allocate({2560, 0}) == base + 1536);  // the 2560-B remainder of the first block
  CHECK(rep(pool, "root_free_blocks") == 1);
  CHECK(dev.malloc_calls() == 1);
}

TEST_CASE("cnmem coalesces freed neighbours back into one block", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(16)));
  std::vector<DevPtr> ps;
  for (int i = 0; i < 8; ++i) ps.push_back(*pool.allocate({static_cast<uint64_t>(100 * kKiB), 0}));
  for (int i : {1, 3, 5, 7, 0, 2, 6, 4}) pool.deallocate(ps[i]);  // merges both ways
  CHECK(rep(pool, "root_free_blocks") == 1);
  CHECK(rep(pool, "root_largest_free_block") == 16 * kMiB);
  CHECK(*pool.allocate({16 * kMiB, 0}) == ps[0]);
}

TEST_CASE("cnmem grows by exact-size cudaMallocs that never merge", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(1)));
  auto a = pool.allocate({3 * kMiB + 1, 0});
  REQUIRE(a);
  CHECK(dev.malloc_calls() == 2);
  CHECK(rep(pool, "reserved_bytes") == kMiB + 3 * kMiB + 512);
  pool.deallocate(*a);
  CHECK(rep(pool, "root_free_blocks") == 2);  // the two regions are adjacent but each starts with a head
  auto b = pool.allocate({4 * kMiB, 0});      // fits neither region alone
  REQUIRE(b);
  CHECK(dev.malloc_calls() == 3);
  CHECK(rep(pool, "reserved_bytes") == 8 * kMiB + 512);
  pool.deallocate(*b);
  pool.check_all_freed(8 * kMiB + 512);
}

TEST_CASE("cnmem cannot_grow: out of memory without calling cudaMalloc", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(1, /*cannot_grow=*/true)));
  CHECK_FALSE(pool.allocate({2 * kMiB, 0}));
  CHECK(pool.stats().num_ooms == 1);
  CHECK(dev.malloc_calls() == 1);
  CHECK(pool.allocate({kMiB, 0}));
}

TEST_CASE("cnmem: a stream's child manager gets exact grants from the root and keeps them", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(8)));
  const DevPtr a = *pool.allocate({1000, 1});
  CHECK(rep(pool, "managers") == 2);
  CHECK(rep(pool, "parent_grants") == 1);
  pool.deallocate(a);
  CHECK(*pool.allocate({1024, 0}) == a + 1024);  // the root cannot see the child's free block
  CHECK(*pool.allocate({512, 1}) == a);          // the child reuses it without asking again
  CHECK(rep(pool, "parent_grants") == 1);
  CHECK(dev.malloc_calls() == 1);
}

TEST_CASE("cnmem: the root steals from a child on out-of-memory", "[pool][cnmem]") {
  for (bool cannot_steal : {false, true}) {
    VirtualDeviceMemory dev(kGiB);
    CheckedPool pool(dev, cnmem(with_init(1, /*cannot_grow=*/true, cannot_steal)));
    const DevPtr g = *pool.allocate({512 * kKiB, 1});
    pool.deallocate(g);                                 // the child keeps 512 KiB free
    CHECK_FALSE(pool.allocate({768 * kKiB, 0}));        // neither the root nor the child has 768 KiB
    CHECK(pool.allocate({256 * kKiB, 0}));              // the root's own rest
    auto s = pool.allocate({512 * kKiB, 0});            // only the child's block fits
    CHECK(s.has_value() == !cannot_steal);
    CHECK(rep(pool, "steals") == (cannot_steal ? 0u : 1u));
    if (s) {
      CHECK(*s == g);
      CHECK_FALSE(pool.allocate({512 * kKiB, 1}));  // the child has nothing left, the root only 256 KiB
      pool.deallocate(*s);
      CHECK(*pool.allocate({512 * kKiB, 0}) == g);  // back in the root's free list as a head block
    }
    pool.check_now();
  }
}

TEST_CASE("cnmem: a child steals part of a sibling's free block through the root", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CheckedPool pool(dev, cnmem(with_init(1, /*cannot_grow=*/true)));
  const DevPtr g = *pool.allocate({kMiB, 1});
  pool.deallocate(g);  // child 1 holds the whole reservation, free
  const DevPtr s = *pool.allocate({256 * kKiB, 2});
  CHECK(s == g);  // best fit in child 1's free list, low part
  CHECK(rep(pool, "steals") == 1);
  CHECK_FALSE(pool.allocate({kMiB, 1}));        // child 1 kept only 768 KiB
  CHECK(*pool.allocate({768 * kKiB, 1}) == g + 256 * kKiB);
  pool.deallocate(s);
  CHECK(*pool.allocate({256 * kKiB, 2}) == s);  // child 2 now owns the stolen piece
  CHECK(rep(pool, "steals") == 1);
}

TEST_CASE("cnmem rejects reservations the device cannot take", "[pool][cnmem]") {
  VirtualDeviceMemory dev(kGiB);
  CHECK_THROWS_AS(CnmemPool(dev, with_init(1024)), ConfigError);  // must be below the capacity
  PoolRegistry r("pool");
  register_cnmem(r);
  Params p(r.get("cnmem").params);
  p.set("init_size_mb", int64_t{-1});
  CHECK_THROWS_AS(r.create("cnmem", p, dev), ConfigError);
  p.set("init_size_mb", int64_t{100});
  p.set("stream_children", false);
  auto pool = r.create("cnmem", p, dev);
  CHECK(dev.reserved() == 100 * kMiB);
  CHECK(pool->allocate({100, 3}));
  CHECK(pool->report()["managers"] == 1);  // every stream served by the root
}
