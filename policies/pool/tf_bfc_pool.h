#pragma once
// `tf-bfc`: TensorFlow's best-fit-with-coalescing allocator (core/common_runtime/bfc_allocator.cc, the GPU
// allocator of TF and XLA), modelled with its constants and rules:
// - sizes rounded up to 256 B; 21 bins by floor(log2(size / 256)), the last one open-ended;
// - allocation scans bins from the request's bin upward, each ordered by (size, address), and takes the first
//   chunk that fits; it splits iff the chunk is >= 2x the rounded size or would waste >= 128 MiB, the new free
//   chunk being the high end;
// - free coalesces with the free physical neighbours inside the same region;
// - a miss extends the pool by a new region: with allow_growth the first is 2 MiB and region sizes double,
//   without it the first Extend takes the whole memory limit; a failed cudaMalloc is retried at 0.9x the size
//   (a float product, as in TF) until it would be smaller than the request;
// - if that fails too and garbage_collection is on, regions without an in-use chunk are freed and Extend retried;
// - a failed allocation goes through AllocatorRetry (allow_retry_on_failure, on for TF's GPU allocator): the whole
//   attempt is made again at once, after a wait of up to 10 s for another thread's free, and a last time: four
//   attempts, each with its own cudaMalloc calls (the wait itself is not simulated time: nothing else frees).
// Default allow_growth=false, TF's GPU default: TF grabs (nearly) all of the memory limit at the first
// allocation, and a faithful baseline must show that. memory_limit_mb=0 means the device capacity (TF itself
// subtracts a little for the driver; dlsim's capacity already is what the pool may have).
// Followed: TSL's tsl/framework/bfc_allocator.cc as of 2024-06 (google/tsl 8f1df69, the last before it moved to
// openxla/xla), on TF's GPU sub-allocator (cudaMalloc per region; regions never coalesce). tests/upstream/ replays
// simulated traces through that very code and compares every call.
// Left out: timestamped chunks (freed_before, used by XLA's stream-ordered reuse), the time AllocatorRetry waits,
// newer XLA's fragmentation_fraction option and spatial partitioning, and the virtual-memory sub-allocator whose
// regions coalesce.
#include <array>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/param_binding.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

// The pool's options in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h).
struct TfBfcOptions {
  bool allow_growth = false;
  uint64_t memory_limit = 0;  // bytes; 0: the device capacity
  bool garbage_collection = true;  // TF_ENABLE_GPU_GARBAGE_COLLECTION, on by default

  static const ParamBindings<TfBfcOptions>& parameters();
  bool operator==(const TfBfcOptions&) const = default;
};

class TfBfcPool : public PoolPolicy {
 public:
  static constexpr uint64_t kMinAllocationSize = 256;
  static constexpr int kNumBins = 21;
  static constexpr uint64_t kMaxInternalFragmentation = 128ull << 20;
  static constexpr uint64_t kFirstGrowthRegion = 2ull << 20;
  static constexpr float kBackpedalFactor = 0.9f;
  static constexpr int kAllocationAttempts = 4;  // the first, AllocatorRetry's two, its last (verbose) one

  TfBfcPool(DeviceMemory& device, const TfBfcOptions& options);
  ~TfBfcPool() override;

  std::string name() const override { return "tf-bfc"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  const PoolStats& stats() const override { return stats_; }
  nlohmann::json report() const override;
  // Without allow_growth the first region is the whole memory limit (or what the back-pedal got of it).
  uint64_t up_front_bytes() const override { return options_.allow_growth ? 0 : first_region_bytes_; }

  static uint64_t rounded_bytes(uint64_t bytes);
  static int bin_for_size(uint64_t bytes);

 private:
  struct Chunk {
    DevPtr ptr = 0;
    uint64_t size = 0;
    uint64_t requested = 0;
    bool in_use = false;
    Chunk* prev = nullptr;  // physical neighbours within the region
    Chunk* next = nullptr;
  };
  struct ChunkLess {
    bool operator()(const Chunk* a, const Chunk* b) const;
  };

  Chunk* attempt(uint64_t rounded);  // TF's AllocateRawInternal: find, extend, collect and extend
  Chunk* find_chunk(uint64_t rounded);
  bool extend(uint64_t rounded);
  bool deallocate_free_regions(uint64_t rounded);
  void insert_free(Chunk* c);
  void remove_free(Chunk* c);
  Chunk* new_chunk(DevPtr ptr, uint64_t size);

  DeviceMemory& device_;
  TfBfcOptions options_;
  uint64_t first_region_bytes_ = 0;  // the size of the first region it got (0 before the first allocation)
  PoolStats stats_;
  uint64_t memory_limit_;
  uint64_t curr_region_allocation_bytes_;
  uint64_t total_region_allocated_bytes_ = 0;
  std::array<std::set<Chunk*, ChunkLess>, kNumBins> bins_;
  std::map<DevPtr, std::unique_ptr<Chunk>> chunks_;  // every chunk by address
  std::map<DevPtr, uint64_t> regions_;               // region start -> bytes
  uint64_t extends_ = 0;
  uint64_t backpedals_ = 0;
  uint64_t gc_freed_regions_ = 0;
  uint64_t retry_waits_ = 0;
  uint64_t splits_ = 0;
};

void register_tf_bfc(PoolRegistry& r);

}  // namespace dlsim
