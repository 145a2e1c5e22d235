// pytorch-caching with expandable_segments (reference A2.6): growing segments, page mapping, unmapping.
#include <catch2/catch.hpp>

#include "common/config_error.h"
#include "common/byte_units.h"
#include "policies/pool/pool_accounting.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {
constexpr uint64_t kPage = 20 * kMiB;  // large-pool page

PytorchCachingOptions expandable() {
  PytorchCachingOptions o;
  o.expandable_segments = true;
  return o;
}

struct ExpandableFixture {
  explicit ExpandableFixture(uint64_t capacity, PytorchCachingOptions o = expandable(), uint64_t total_global_mem = 0)
      : dev(capacity, total_global_mem), pool(dev, [o](DeviceMemory& d) { return std::make_unique<PytorchCachingPool>(d, o); }) {}
  PytorchCachingPool& torch() { return static_cast<PytorchCachingPool&>(pool.inner()); }
  uint64_t rep(const char* key) const { return pool.report()[key].get<uint64_t>(); }
  DevPtr alloc(uint64_t bytes, int stream = 0) { return pool.allocate({bytes, stream}).value(); }
  VirtualDeviceMemory dev;
  CheckedPool pool;
};

// cudaMalloc and cudaFree only, as validate/'s arena is.
class MallocOnlyDevice : public DeviceMemory {
 public:
  std::optional<DevPtr> malloc(uint64_t) override { return std::nullopt; }
  void free(DevPtr) override {}
  uint64_t capacity() const override { return kGiB; }
  uint64_t reserved() const override { return 0; }
  uint64_t peak_reserved() const override { return 0; }
  uint64_t malloc_calls() const override { return 0; }
  uint64_t free_calls() const override { return 0; }
  uint64_t bytes_malloced() const override { return 0; }
  uint64_t bytes_freed() const override { return 0; }
};
}  // namespace

TEST_CASE("expandable_segments is a registry option and needs a device with virtual memory",
          "[pool][pytorch][expandable]") {
  PoolRegistry r("pool");
  register_pytorch_caching(r);
  const auto& entry = r.get("pytorch-caching");
  Params p(entry.params);
  CHECK_FALSE(PytorchCachingOptions::parameters().from_params(p).expandable_segments);  // off by default
  p.set("expandable_segments", true);
  CHECK(PytorchCachingOptions::parameters().from_params(p).expandable_segments);
  MallocOnlyDevice plain;
  try {
    r.create("pytorch-caching", p, plain);
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "expandable_segments");
    CHECK_THAT(e.what(), Catch::Contains("virtual-memory"));
  }
  VirtualDeviceMemory dev(kGiB);
  CHECK(r.create("pytorch-caching", p, dev)->name() == "pytorch-caching");
  CHECK(r.create("pytorch-caching", Params(entry.params), plain) != nullptr);  // without the option a plain device is fine
}

TEST_CASE("expandable segments: one segment grows by pages, a growing batch reuses it instead of new segments",
          "[pool][pytorch][expandable]") {
  // Each iteration's activation is 1 MiB larger (the batch-size drift of PyTorch's Note [Expandable Segments]).
  uint64_t peak[2] = {0, 0};
  for (bool on : {false, true}) {
    ExpandableFixture f(kGiB, on ? expandable() : PytorchCachingOptions{});
    for (uint64_t mib = 30; mib < 40; ++mib) f.pool.deallocate(f.alloc(mib * kMiB));
    peak[on] = f.dev.peak_reserved();
    CHECK(f.rep("reserved_bytes") == f.dev.reserved());
  }
  // cudaMalloc segments 30, 32, 34, 36, 38, 40 MiB (each new size misses the smaller cached one); expandable: the
  // first request maps two 20 MiB pages and every later one fits in them.
  CHECK(peak[0] == 210 * kMiB);
  CHECK(peak[1] == 40 * kMiB);

  ExpandableFixture f(kGiB);
  const DevPtr a = f.alloc(10 * kMiB);
  CHECK(f.dev.map_calls() == 1);  // one 20 MiB page, not a 20 MiB cudaMalloc
  CHECK(f.dev.malloc_calls() == 0);
  CHECK(a >= VirtualDeviceMemory::kAddressRangeBase);
  // The address space is 1.125 x the device's memory, in whole pages: ceil(1152 MiB / 20 MiB) = 58 pages.
  CHECK(f.dev.reserved_address_bytes() == 58 * kPage);
  // 25 MiB does not fit the 10 MiB free rest: a page is mapped right after it and the two merge, so the block
  // starts right after a (a cudaMalloc'd segment would be elsewhere).
  const DevPtr b = f.alloc(25 * kMiB);
  CHECK(b == a + 10 * kMiB);
  CHECK(f.dev.reserved() == 2 * kPage);
  CHECK(f.rep("expandable_segments") == 1);
  CHECK(f.rep("segment_maps") == 2);
  CHECK(f.rep("segments") == 0);  // PyTorch's segment stat counts cudaMalloc segments only
  CHECK(f.rep("cached_bytes") == 5 * kMiB);
  // Another stream and the small pool each get their own segment.
  f.alloc(kMiB, 1);
  f.alloc(1, 0);
  CHECK(f.rep("expandable_segments") == 3);
  CHECK(f.dev.reserved() == 2 * kPage + 2 * 2 * kMiB);  // small-pool pages are 2 MiB
  f.pool.check_now();
}

TEST_CASE("expandable segments split down to 512 B in the large pool too", "[pool][pytorch][expandable]") {
  const uint64_t req = kPage - 512 * 1024;  // the rest, 512 KiB, is not above 1 MiB: the default keeps it
  ExpandableFixture plain(kGiB, PytorchCachingOptions{});
  plain.alloc(req);
  CHECK(plain.pool.stats().allocated_bytes == kPage);
  ExpandableFixture f(kGiB);
  f.alloc(req);
  CHECK(f.pool.stats().allocated_bytes == req);
  CHECK(f.rep("cached_bytes") == 512 * 1024);
}

TEST_CASE("expandable segments: empty_cache unmaps whole free pages only, and new pages fill the lowest hole",
          "[pool][pytorch][expandable]") {
  // Offsets in MiB from the segment base: A [0,10) B [10,50) C [50,55), free [55,60); pages of 20 MiB.
  auto setup = [](ExpandableFixture& f, DevPtr& base) {
    base = f.alloc(10 * kMiB);
    const DevPtr b = f.alloc(40 * kMiB);
    const DevPtr c = f.alloc(5 * kMiB);
    REQUIRE(b == base + 10 * kMiB);
    REQUIRE(c == base + 50 * kMiB);
    REQUIRE(f.dev.reserved() == 3 * kPage);
    f.pool.deallocate(b);
    f.torch().empty_cache();  // of [10,50) only the page [20,40) is entirely free
    CHECK(f.dev.reserved() == 2 * kPage);
    CHECK(f.rep("segment_unmaps") == 1);
    CHECK(f.dev.unmap_calls() == 1);
    CHECK(f.rep("cached_bytes") == 25 * kMiB);  // [10,20), [40,50) and [55,60) stay mapped
    f.pool.check_now();
  };
  SECTION("a request that fits the hole and its free edges goes there, and they merge") {
    ExpandableFixture f(kGiB);
    DevPtr base = 0;
    setup(f, base);
    CHECK(f.alloc(25 * kMiB) == base + 10 * kMiB);  // [10,20) + remapped [20,40) + [40,50)
    CHECK(f.dev.reserved() == 3 * kPage);
    CHECK(f.rep("cached_bytes") == 20 * kMiB);  // [35,50) and [55,60)
  }
  SECTION("a request too large for the hole grows the end of the segment") {
    ExpandableFixture f(kGiB);
    DevPtr base = 0;
    setup(f, base);
    CHECK(f.alloc(50 * kMiB) == base + 55 * kMiB);  // [55,60) + pages [60,120)
    CHECK(f.dev.reserved() == 5 * kPage);
  }
  SECTION("once everything is free, empty_cache unmaps every page and gives the address range back") {
    ExpandableFixture f(kGiB);
    DevPtr base = 0;
    setup(f, base);
    f.pool.deallocate(base);
    f.pool.deallocate(base + 50 * kMiB);
    f.torch().empty_cache();
    CHECK(f.dev.reserved() == 0);
    CHECK(f.dev.reserved_address_bytes() == 0);
    CHECK(f.rep("expandable_segments") == 0);
    CHECK(f.dev.unmap_calls() == 3);  // each page is its own physical allocation
    f.pool.check_all_freed(0);
  }
}

TEST_CASE("expandable segments: out of memory unmaps other streams' free pages, then fails cleanly",
          "[pool][pytorch][expandable]") {
  ExpandableFixture f(64 * kMiB);
  f.pool.deallocate(f.alloc(30 * kMiB, 0));  // stream 0 keeps 40 MiB mapped
  const DevPtr b = f.alloc(30 * kMiB, 1);    // 40 more do not fit: the retry unmaps stream 0's pages
  CHECK(f.pool.stats().num_ooms == 0);
  CHECK(f.rep("num_alloc_retries") == 1);
  CHECK(f.rep("num_sync_all_streams") == 1);
  CHECK(f.rep("segment_unmaps") == 1);
  CHECK(f.rep("expandable_segments") == 1);  // stream 0's segment had nothing mapped left: released
  CHECK(f.dev.reserved() == 40 * kMiB);

  const auto maps = f.dev.map_calls(), unmaps = f.dev.unmap_calls();
  CHECK_FALSE(f.pool.allocate({35 * kMiB, 1}));  // 10 MiB free rest + 2 pages, but only 24 MiB are left
  // A map is all or nothing: the page mapped before the failing one is released again (in both attempts).
  CHECK(f.dev.map_calls() - maps == 2);
  CHECK(f.dev.unmap_calls() - unmaps == 2);
  CHECK(f.pool.stats().num_ooms == 1);
  CHECK(f.dev.reserved() == 40 * kMiB);
  f.pool.deallocate(b);
  CHECK(f.pool.allocate({50 * kMiB, 1}));  // the whole 40 MiB + one more page
  CHECK(f.dev.reserved() == 60 * kMiB);

  ExpandableFixture g(50 * kMiB);
  CHECK_FALSE(g.pool.allocate({45 * kMiB, 0}));  // 3 pages = 60 MiB: the third fails, the two before are released
  CHECK(g.dev.reserved() == 0);
  CHECK(g.dev.mapped() == 0);
  CHECK(g.pool.stats().num_ooms == 1);
  g.pool.check_now();
}

// PyTorch reserves 1 1/8 of cudaDeviceProp::totalGlobalMem of address space per segment; dlsim used the capacity
// left after the CUDA context, so a second segment started lower than PyTorch's (found by the upstream replay).
TEST_CASE("expandable segments reserve 1.125 x totalGlobalMem of addresses, not of the capacity",
          "[pool][pytorch][expandable]") {
  ExpandableFixture f(900 * kMiB, expandable(), kGiB);
  const DevPtr small = f.alloc(4096);       // the small pool's segment: 2 MiB pages
  const DevPtr large = f.alloc(4 * kMiB);   // the large pool's: a second range, after the first
  const uint64_t small_range = 576 * (2 * kMiB);  // ceil(1.125 GiB / 2 MiB) pages
  CHECK(large - small == small_range);
  CHECK(f.dev.reserved_address_bytes() == small_range + 58 * (20 * kMiB));  // ceil(1.125 GiB / 20 MiB) = 58
}

TEST_CASE("expandable segments: memory_fraction still tests the cudaMalloc size", "[pool][pytorch][expandable]") {
  PytorchCachingOptions o = expandable();
  o.memory_fraction = 0.25;  // 64 MiB of 256
  ExpandableFixture f(256 * kMiB, o);
  f.alloc(50 * kMiB);                        // maps 60 MiB
  CHECK(f.pool.allocate({5 * kMiB, 0}));     // fits the mapped rest: no device call
  CHECK_FALSE(f.pool.allocate({12 * kMiB, 0}));  // 60 + 12 > 64: refused before mapping
  CHECK(f.dev.reserved() == 60 * kMiB);
}

TEST_CASE("expandable segments keep the pool invariants over thousands of DNN-like operations",
          "[pool][pytorch][expandable][random]") {
  for (int streams : {1, 2}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      INFO(streams << " streams, seed " << seed);
      const auto trace = cnn_like_trace(seed, 300, 3, streams);
      VirtualDeviceMemory dev(6 * kGiB);
      CheckedPool pool(dev, [](DeviceMemory& d) { return std::make_unique<PytorchCachingPool>(d, expandable()); });
      const ReplayResult run = replay_trace(pool, trace, 101, [&] { pool.check_now(); });
      REQUIRE(run.left_live == 0);
      CHECK(pool.stats().num_ooms == run.ooms);
      const auto rep = pool.report();
      CHECK(rep["cached_bytes"].get<uint64_t>() == rep["reserved_bytes"].get<uint64_t>());
      CHECK(dev.map_calls() > 0);
      static_cast<PytorchCachingPool&>(pool.inner()).empty_cache();
      pool.check_all_freed(0);
      CHECK(dev.mapped() == 0);
      CHECK(dev.address_ranges() == pool.report()["expandable_segments"].get<uint64_t>());
      CHECK(pool.stats().num_allocs > 2000);
    }
  }
}
