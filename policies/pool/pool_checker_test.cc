#include "policies/pool/pool_checker.h"
#include "common/byte_units.h"

#include <catch2/catch.hpp>

#include "policies/pool/cnmem_pool.h"
#include "policies/pool/cuda_malloc_pool.h"
#include "policies/pool/pool_accounting.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/testing/synthetic_alloc_trace.h"
#include "policies/pool/tf_bfc_pool.h"
#include "policies/pool/virtual_device_memory.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// A deliberately wrong pool: one 1 MiB segment handed out by a bump pointer, with a chosen defect.
enum class Defect { None, Overlap, Outside, FreeSegmentEarly, MiscountFrees };
class BrokenPool : public PoolPolicy {
 public:
  BrokenPool(DeviceMemory& d, Defect defect) : d_(d), defect_(defect) { base_ = *d_.malloc(kMiB); }
  std::string name() const override { return "broken"; }
  std::optional<DevPtr> allocate(const AllocRequest& r) override {
    DevPtr p = base_ + top_;
    if (defect_ == Defect::Overlap) p = base_;
    if (defect_ == Defect::Outside && top_ > 0) p = base_ + kMiB;
    top_ += round_up(r.bytes, 512);
    note_alloc(s_, r.bytes, round_up(r.bytes, 512));
    sizes_[p] = r.bytes;
    return p;
  }
  void deallocate(DevPtr p) override {
    note_free(s_, sizes_[p], round_up(sizes_[p], 512));
    if (defect_ == Defect::MiscountFrees) --s_.num_frees;
    if (defect_ == Defect::FreeSegmentEarly && base_) {
      d_.free(base_);
      base_ = 0;
    }
  }
  const PoolStats& stats() const override { return s_; }

 private:
  DeviceMemory& d_;
  Defect defect_;
  DevPtr base_ = 0;
  uint64_t top_ = 0;
  PoolStats s_;
  std::map<DevPtr, uint64_t> sizes_;
};

CheckedPool::PoolFactory broken(Defect d) {
  return [d](DeviceMemory& dev) { return std::make_unique<BrokenPool>(dev, d); };
}
}  // namespace

TEST_CASE("the checker accepts a correct pool and catches each kind of defect", "[pool][checker]") {
  VirtualDeviceMemory dev(kGiB);
  {
    CheckedPool ok(dev, broken(Defect::None));
    auto a = ok.allocate({1000, 0});
    auto b = ok.allocate({1000, 0});
    ok.deallocate(*a);
    ok.deallocate(*b);
    ok.check_all_freed(kMiB);
    CHECK_THROWS_AS(ok.check_all_freed(0), PoolInvariantError);  // it does hold 1 MiB
    CHECK_THROWS_AS(ok.deallocate(*a), PoolInvariantError);      // double free
  }
  {
    CheckedPool p(dev, broken(Defect::Overlap));
    p.allocate({1000, 0});
    CHECK_THROWS_AS(p.allocate({1000, 0}), PoolInvariantError);
  }
  {
    CheckedPool p(dev, broken(Defect::Outside));
    p.allocate({1000, 0});
    CHECK_THROWS_AS(p.allocate({1000, 0}), PoolInvariantError);
  }
  {
    CheckedPool p(dev, broken(Defect::FreeSegmentEarly));
    auto a = p.allocate({1000, 0});
    p.allocate({1000, 0});
    CHECK_THROWS_AS(p.deallocate(*a), PoolInvariantError);  // the segment still holds the second block
  }
  {
    CheckedPool p(dev, broken(Defect::MiscountFrees));
    auto a = p.allocate({1000, 0});
    CHECK_THROWS_AS(p.deallocate(*a), PoolInvariantError);
  }
}

namespace {
struct PoolCase {
  const char* label;
  CheckedPool::PoolFactory make;
  const char* free_key;     // report key of the pool's free (cached) bytes
  bool releases_on_empty;   // pytorch-caching: empty_cache returns everything
};

std::vector<PoolCase> all_pools() {
  auto cnmem = [](CnmemOptions o) {
    return [o](DeviceMemory& d) -> std::unique_ptr<PoolPolicy> { return std::make_unique<CnmemPool>(d, o); };
  };
  auto torch = [](PytorchCachingOptions o) {
    return [o](DeviceMemory& d) -> std::unique_ptr<PoolPolicy> { return std::make_unique<PytorchCachingPool>(d, o); };
  };
  auto bfc = [](TfBfcOptions o) {
    return [o](DeviceMemory& d) -> std::unique_ptr<PoolPolicy> { return std::make_unique<TfBfcPool>(d, o); };
  };
  CnmemOptions small_cnmem;
  small_cnmem.init_size_bytes = 256 * kMiB;
  CnmemOptions root_only = small_cnmem;
  root_only.stream_children = false;
  PytorchCachingOptions tuned;
  tuned.max_split_size = 64 * kMiB;
  tuned.roundup_power2_divisions = 4;
  tuned.memory_fraction = 0.9;
  tuned.garbage_collection_threshold = 0.6;
  TfBfcOptions growth;
  growth.allow_growth = true;
  return {
      {"cuda-malloc", [](DeviceMemory& d) { return std::make_unique<CudaMallocPool>(d); }, nullptr, false},
      {"cnmem default", cnmem(CnmemOptions{}), "free_bytes", false},
      {"cnmem 256 MiB init", cnmem(small_cnmem), "free_bytes", false},
      {"cnmem root only", cnmem(root_only), "free_bytes", false},
      {"pytorch-caching", torch(PytorchCachingOptions{}), "cached_bytes", true},
      {"pytorch-caching tuned", torch(tuned), "cached_bytes", true},
      {"tf-bfc", bfc(TfBfcOptions{}), "free_bytes", false},
      {"tf-bfc growth", bfc(growth), "free_bytes", false},
  };
}
}  // namespace

TEST_CASE("every pool keeps the invariants over thousands of DNN-like operations", "[pool][checker][random]") {
  for (int streams : {1, 2}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      const auto trace = cnn_like_trace(seed, 300, 3, streams);
      for (const PoolCase& c : all_pools()) {
        INFO(c.label << ", " << streams << " streams, seed " << seed);
        // 6 GiB: roomy enough for most pools, tight enough that some hit their out-of-memory paths.
        VirtualDeviceMemory dev(6 * kGiB);
        CheckedPool pool(dev, c.make);
        const ReplayResult run = replay_trace(pool, trace, 101, [&] { pool.check_now(); });
        REQUIRE(run.left_live == 0);
        CHECK(pool.stats().num_ooms == run.ooms);
        const auto rep = pool.report();
        const uint64_t reserved = rep["reserved_bytes"].get<uint64_t>();
        if (c.free_key) CHECK(rep[c.free_key].get<uint64_t>() == reserved);  // every reserved byte is free again
        if (c.releases_on_empty) {
          static_cast<PytorchCachingPool&>(pool.inner()).empty_cache();
          pool.check_all_freed(0);
        } else {
          pool.check_all_freed(reserved);
        }
        CHECK(pool.stats().num_allocs > 2000);
      }
    }
  }
}

TEST_CASE("the synthetic trace is deterministic and balanced", "[pool][checker]") {
  const auto a = cnn_like_trace(7, 50, 2, 2), b = cnn_like_trace(7, 50, 2, 2);
  REQUIRE(a.size() == b.size());
  int balance = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    CHECK((a[i].id == b[i].id && a[i].bytes == b[i].bytes && a[i].stream == b[i].stream));
    balance += a[i].alloc ? 1 : -1;
  }
  CHECK(balance == 0);
  CHECK(cnn_like_trace(8, 50, 2, 2)[0].bytes != a[0].bytes);
}

TEST_CASE("the pool registry builds the four online pools from their default parameters", "[pool][checker]") {
  const auto names = pool_registry().names();
  REQUIRE(names.size() >= 4);
  CHECK(std::vector<std::string>(names.begin(), names.begin() + 4) ==
        std::vector<std::string>{"cuda-malloc", "cnmem", "pytorch-caching", "tf-bfc"});
  const auto trace = cnn_like_trace(11, 40, 2, 2);
  for (int i = 0; i < 4; ++i) {
    const auto& entry = pool_registry().get(names[static_cast<size_t>(i)]);
    VirtualDeviceMemory dev(16 * kGiB);
    CheckedPool pool(dev, [&](DeviceMemory& d) { return entry.factory(Params(entry.params), d); });
    CHECK(pool.name() == entry.name);
    std::map<uint32_t, DevPtr> live;
    for (const AllocTraceOp& op : trace) {
      if (op.alloc) {
        live.emplace(op.id, pool.allocate({op.bytes, op.stream}).value());  // throws if out of memory
      } else {
        pool.deallocate(live.at(op.id));
        live.erase(op.id);
      }
    }
    CHECK(pool.stats().num_ooms == 0);
    pool.check_now();
  }
}
