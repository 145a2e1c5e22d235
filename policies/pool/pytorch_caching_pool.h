#pragma once
// `pytorch-caching`: PyTorch's CUDACachingAllocator (native backend, c10/cuda/CUDACachingAllocator.cpp),
// one device, modelled with its constants and rules (checked call by call against the upstream file at
// pytorch/pytorch 001074d by tests/upstream/, see its README; two rules follow later PyTorch, which that version
// lacks: max_non_split_rounding, and release_available_cached_blocks passing over expandable segments' blocks
// where 001074d trips an internal assert):
// - round_size: 512 B multiples (or roundup_power2_divisions steps); <= 1 MiB goes to the small pool
//   (2 MiB segments), larger to the large pool (20 MiB segments below 10 MiB, else 2 MiB-rounded segments);
// - best fit in an ordered set keyed by (stream, size, address), blocks never shared across streams;
//   max_split_size keeps oversize blocks for oversize requests (within max_non_split_rounding);
// - split: small pool iff the rest >= 512 B; large pool iff request < max_split_size and rest > 1 MiB;
//   the request takes the low part; free merges with free neighbours of the same segment;
// - on a miss: garbage collection (only with a threshold and a memory fraction), cudaMalloc (refused above
//   the fraction, which is of totalGlobalMem as cudaMemGetInfo reports it, not of the capacity left to the pool), then release_available_cached_blocks (only with max_split_size) and retry, then
//   release_cached_blocks (= empty_cache: every unsplit cached segment) and retry (num_alloc_retries), then OOM.
// - expandable_segments (pytorch_caching_expandable.cc): one growing segment per (stream, pool) instead of one
//   segment per cudaMalloc; see that file for the rules.
// record_stream's events (insert_events at a free, process_events at each allocation, synchronize_and_free_events
// before giving up) are the executor's, for every pool (sim/executor.h): the pool sees the free when they are done.
// Left out: free-memory
// callbacks, CUDA-graph private pools, and the cudaMallocAsync backend.
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "common/param_binding.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

// The pool's options in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h).
struct PytorchCachingOptions {
  uint64_t max_split_size = UINT64_MAX;         // max_split_size_mb; unlimited by default
  uint64_t max_non_split_rounding = 20 << 20;   // max_non_split_rounding_mb
  uint64_t roundup_power2_divisions = 0;        // 0: plain 512-B rounding
  double garbage_collection_threshold = 0.0;    // 0: off; else in (0, 1)
  double memory_fraction = 0.0;                 // set_per_process_memory_fraction; 0: not called
  bool expandable_segments = false;             // needs a DeviceMemory with supports_virtual_memory()

  static const ParamBindings<PytorchCachingOptions>& parameters();
  bool operator==(const PytorchCachingOptions&) const = default;
};

class PytorchCachingPool : public PoolPolicy {
 public:
  static constexpr uint64_t kMinBlockSize = 512;
  static constexpr uint64_t kSmallSize = 1 << 20;
  static constexpr uint64_t kSmallBuffer = 2 << 20;
  static constexpr uint64_t kMinLargeAlloc = 10 << 20;
  static constexpr uint64_t kLargeBuffer = 20 << 20;
  static constexpr uint64_t kRoundLarge = 2 << 20;

  // Throws ConfigError when options.expandable_segments is set and the device has no virtual-memory calls.
  PytorchCachingPool(DeviceMemory& device, const PytorchCachingOptions& options);
  ~PytorchCachingPool() override;

  std::string name() const override { return "pytorch-caching"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  const PoolStats& stats() const override { return stats_; }
  nlohmann::json report() const override;

  // torch.cuda.empty_cache(): cudaFree every cached segment that is not split; with expandable segments, unmap
  // every page no live block touches (and give back a segment's address range once nothing in it is mapped).
  void empty_cache() { release_cached_blocks(); }

  static uint64_t round_size(uint64_t size, uint64_t divisions);
  static uint64_t allocation_size(uint64_t rounded);

 private:
  struct ExpandableSegment {
    DevPtr base = 0;
    uint64_t size = 0;       // reserved address space: ceil(1.125 x capacity / page) pages
    uint64_t page = 0;       // 2 MiB (small pool) or 20 MiB (large pool): one physical allocation each
    uint64_t mapped = 0;
  };
  struct Block {
    DevPtr ptr = 0;
    uint64_t size = 0;
    uint64_t requested = 0;
    int stream = 0;
    bool small = false;
    bool allocated = false;
    Block* prev = nullptr;  // neighbours within the segment
    Block* next = nullptr;
    uint64_t gc_count_base = 0;
    ExpandableSegment* segment = nullptr;  // set for blocks of an expandable segment
    bool mapped = true;                     // false: unmapped address space of an expandable segment
    bool is_split() const { return prev || next; }
  };
  struct BlockLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct AddressLess {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct BlockPool {
    bool small = false;
    std::set<Block*, BlockLess> blocks;      // free mapped blocks
    std::set<Block*, AddressLess> unmapped;  // unmapped ranges of expandable segments, lowest address first
    uint64_t get_free_blocks_call_count = 0;
  };

  BlockPool& pool_of(bool small) { return small ? small_ : large_; }
  void insert_free(BlockPool& pool, Block* b);
  Block* get_free_block(BlockPool& pool, int stream, uint64_t size);
  Block* alloc_block(BlockPool& pool, int stream, uint64_t size, uint64_t alloc_size, bool is_retry);
  bool release_available_cached_blocks(BlockPool& pool, int stream, uint64_t size);
  void release_cached_blocks();
  void release_pool(BlockPool& pool);
  void release_block(Block* b);
  void garbage_collect_cached_blocks();
  uint64_t allowed_memory_maximum() const;  // memory_fraction x totalGlobalMem, whole bytes
  bool should_split(const Block* b, uint64_t size) const;
  void free_block(Block* b);
  uint64_t try_merge_blocks(BlockPool& pool, Block* dst, Block* src);
  Block* new_block(DevPtr ptr, uint64_t size, int stream, bool small);
  void delete_block(Block* b);
  void rekey(Block* b, DevPtr new_ptr);
  // Expandable segments (pytorch_caching_expandable.cc).
  Block* try_allocate_expandable_block(BlockPool& pool, int stream, uint64_t size);
  Block* find_expandable_block(BlockPool& pool, int stream, uint64_t size);
  bool map_block(BlockPool& pool, Block* b, uint64_t size);
  void unmap_block(BlockPool& pool, Block* b);
  void release_expandable_segment(BlockPool& pool, Block* b);

  DeviceMemory& device_;
  PytorchCachingOptions options_;
  PoolStats stats_;
  BlockPool small_, large_;
  std::map<DevPtr, std::unique_ptr<Block>> blocks_;  // every block, free or allocated, by address
  uint64_t reserved_ = 0;                            // total_allocated_memory in PyTorch's words
  uint64_t segments_ = 0;
  uint64_t device_mallocs_ = 0;
  uint64_t device_frees_ = 0;
  uint64_t failed_device_mallocs_ = 0;
  uint64_t alloc_retries_ = 0;
  uint64_t sync_all_streams_ = 0;
  uint64_t cache_hits_ = 0;
  uint64_t splits_ = 0;
  uint64_t oversize_allocations_ = 0;
  uint64_t gc_released_blocks_ = 0;
  std::map<DevPtr, std::unique_ptr<ExpandableSegment>> segments_by_base_;  // live expandable segments
  uint64_t segment_maps_ = 0;    // map_block calls that mapped pages (PyTorch's SEGMENT_MAP trace entries)
  uint64_t segment_unmaps_ = 0;  // unmap_block calls that unmapped pages, each after a stream synchronize
};

void register_pytorch_caching(PoolRegistry& r);

}  // namespace dlsim
