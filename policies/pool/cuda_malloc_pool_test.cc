#include "policies/pool/cuda_malloc_pool.h"

#include <catch2/catch.hpp>

#include "policies/pool/pool_checker.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;

TEST_CASE("cuda-malloc: one device call per allocation and per free", "[pool][cuda-malloc]") {
  VirtualDeviceMemory dev(1 << 20);
  CheckedPool pool(dev, [](DeviceMemory& d) { return std::make_unique<CudaMallocPool>(d); });
  auto a = pool.allocate({1000, 0});
  auto b = pool.allocate({0, 1});
  REQUIRE(a);
  REQUIRE(b);
  CHECK(dev.malloc_calls() == 2);
  CHECK(pool.stats().allocated_bytes == 1001);  // no pool rounding; a 0-byte tensor takes 1 byte
  CHECK(pool.stats().requested_bytes == 1000);
  CHECK(pool.report()["reserved_bytes"] == 1001);
  pool.deallocate(*a);
  pool.deallocate(*b);
  CHECK(dev.free_calls() == 2);
  CHECK(dev.reserved() == 0);
  pool.check_all_freed(0);
  CHECK(pool.stats().peak_allocated_bytes == 1001);
}

TEST_CASE("cuda-malloc: out of memory is nullopt and counted", "[pool][cuda-malloc]") {
  VirtualDeviceMemory dev(4096);
  CudaMallocPool pool(dev);
  CHECK(pool.allocate({4096, 0}));
  CHECK_FALSE(pool.allocate({1, 0}));
  CHECK(pool.stats().num_ooms == 1);
  CHECK_THROWS_AS(pool.deallocate(777), std::logic_error);
}

TEST_CASE("cuda-malloc registers without parameters", "[pool][cuda-malloc]") {
  PoolRegistry r("pool");
  register_cuda_malloc(r);
  VirtualDeviceMemory dev(1 << 20);
  auto pool = r.create("cuda-malloc", Params(r.get("cuda-malloc").params), dev);
  CHECK(pool->name() == "cuda-malloc");
  CHECK(r.get("cuda-malloc").params.empty());
}
