#include "policies/pool/pytorch_caching_pool.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <stdexcept>
#include <tuple>

#include "common/config_error.h"
#include "policies/pool/pool_accounting.h"

namespace dlsim {

const ParamBindings<PytorchCachingOptions>& PytorchCachingOptions::parameters() {
  using O = PytorchCachingOptions;
  static const auto b = ParamBindings<O>()
      .add("max_split_size_mb", &O::max_split_size, mebibytes_zero_unlimited(),
           "blocks at least this large are never split (0: unlimited, PyTorch's default)",
           ParamCheck::zero_or(ParamCheck::in_range(20, kMaxMebibytes)))
      .add("max_non_split_rounding_mb", &O::max_non_split_rounding, mebibytes(),
           "an oversize request may take a cached oversize block at most this much larger",
           ParamCheck::in_range(20, kMaxMebibytes))
      .add("roundup_power2_divisions", &O::roundup_power2_divisions,
           "round sizes up to one of this many steps per power of two (0: 512-B rounding)",
           ParamCheck::zero_or(ParamCheck::power_of_two()))
      .add("garbage_collection_threshold", &O::garbage_collection_threshold,
           "reclaim old cached large blocks when reserved > this fraction of the allowed memory (0: off; needs "
           "memory_fraction)",
           ParamCheck::zero_or(ParamCheck::between(0, 1)))
      .add("memory_fraction", &O::memory_fraction,
           "set_per_process_memory_fraction: cap reserved memory at this fraction of totalGlobalMem (0: not set)",
           ParamCheck::in_range(0, 1))
      .add("expandable_segments", &O::expandable_segments,
           "one growing segment per stream and pool, 2/20 MiB pages mapped on demand (needs virtual-memory support)");
  return b;
}

bool PytorchCachingPool::BlockLess::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->size, a->ptr) < std::tie(b->stream, b->size, b->ptr);
}

bool PytorchCachingPool::AddressLess::operator()(const Block* a, const Block* b) const {
  return std::tie(a->stream, a->ptr) < std::tie(b->stream, b->ptr);
}

PytorchCachingPool::PytorchCachingPool(DeviceMemory& device, const PytorchCachingOptions& options)
    : device_(device), options_(options) {
  small_.small = true;
  if (options_.expandable_segments && !device_.supports_virtual_memory())
    throw ConfigError("", 0, "expandable_segments",
                      "pytorch-caching: expandable_segments needs a device with virtual-memory calls "
                      "(cuMemAddressReserve/cuMemMap), and this DeviceMemory has none");
}

PytorchCachingPool::~PytorchCachingPool() = default;

uint64_t PytorchCachingPool::round_size(uint64_t size, uint64_t divisions) {
  if (size < kMinBlockSize) return kMinBlockSize;
  if (divisions > 1 && size > kMinBlockSize * divisions) {
    // Equal steps between consecutive powers of two; a power of two stays as it is.
    if (std::has_single_bit(size)) return size;
    const uint64_t floor2 = std::bit_floor(size);
    const uint64_t step = floor2 / divisions;
    if (step == 0) return floor2 << 1;
    const uint64_t down = size & ~(step - 1);
    return down == size ? size : down + step;
  }
  return round_up(size, kMinBlockSize);
}

uint64_t PytorchCachingPool::allocation_size(uint64_t rounded) {
  if (rounded <= kSmallSize) return kSmallBuffer;
  if (rounded < kMinLargeAlloc) return kLargeBuffer;
  return round_up(rounded, kRoundLarge);
}

PytorchCachingPool::Block* PytorchCachingPool::new_block(DevPtr ptr, uint64_t size, int stream, bool small) {
  auto b = std::make_unique<Block>();
  b->ptr = ptr;
  b->size = size;
  b->stream = stream;
  b->small = small;
  Block* raw = b.get();
  blocks_.emplace(ptr, std::move(b));
  return raw;
}

void PytorchCachingPool::delete_block(Block* b) { blocks_.erase(b->ptr); }

// A block that takes over its lower neighbour's range moves to that address (it must be in no ordered set).
void PytorchCachingPool::rekey(Block* b, DevPtr new_ptr) {
  auto node = blocks_.extract(b->ptr);
  b->ptr = new_ptr;
  node.key() = new_ptr;
  blocks_.insert(std::move(node));
}

void PytorchCachingPool::insert_free(BlockPool& pool, Block* b) {
  b->gc_count_base = pool.get_free_blocks_call_count;  // a block's age counts from its last insertion
  pool.blocks.insert(b);
}

bool PytorchCachingPool::should_split(const Block* b, uint64_t size) const {
  const uint64_t remaining = b->size - size;
  if (b->small || options_.expandable_segments) return remaining >= kMinBlockSize;
  return size < options_.max_split_size && remaining > kSmallSize;
}

PytorchCachingPool::Block* PytorchCachingPool::get_free_block(BlockPool& pool, int stream, uint64_t size) {
  const bool gc_on = options_.memory_fraction > 0.0 && options_.garbage_collection_threshold > 0.0;
  if (gc_on) ++pool.get_free_blocks_call_count;
  Block key;
  key.stream = stream;
  key.size = size;
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != stream) return nullptr;
  if ((*it)->segment) {
    // Best fit counts a block followed by unmapped space at the size it could grow to, so a larger block that
    // cannot grow is preferred over the growing end of a segment; walk up while the next one is smaller so.
    auto expandable_size = [](const Block* x) { return x->size + (x->next && !x->next->mapped ? x->next->size : 0); };
    for (auto next = std::next(it); (*it)->segment && next != pool.blocks.end() && (*next)->stream == stream &&
                                    expandable_size(*next) < expandable_size(*it);
         ++next)
      it = next;
  }
  // Oversize blocks serve only oversize requests, and only when not much larger.
  if (size < options_.max_split_size && (*it)->size >= options_.max_split_size) return nullptr;
  if (size >= options_.max_split_size && (*it)->size >= size + options_.max_non_split_rounding) return nullptr;
  Block* b = *it;
  pool.blocks.erase(it);
  return b;
}

PytorchCachingPool::Block* PytorchCachingPool::alloc_block(BlockPool& pool, int stream, uint64_t size,
                                                           uint64_t alloc_size, bool is_retry) {
  if (is_retry) ++alloc_retries_;
  // PyTorch tests the fraction with the cudaMalloc size even when it would map pages instead.
  if (options_.memory_fraction > 0.0 && reserved_ + alloc_size > allowed_memory_maximum())
    return nullptr;  // over the per-process fraction: refused without calling CUDA
  if (options_.expandable_segments) {
    Block* b = try_allocate_expandable_block(pool, stream, size);
    if (!b) ++failed_device_mallocs_;
    return b;
  }
  auto p = device_.malloc(alloc_size);
  if (!p) {
    ++failed_device_mallocs_;
    return nullptr;
  }
  ++device_mallocs_;
  ++segments_;
  reserved_ += alloc_size;
  return new_block(*p, alloc_size, stream, pool.small);
}

// set_per_process_memory_fraction takes its fraction of the total that cudaMemGetInfo reports, which is the whole
// device (totalGlobalMem, the CUDA context's share included), not what is free for the pool, and truncates it to
// whole bytes (the upstream replay, tests/upstream/README.md, found the capacity-based cap too low).
uint64_t PytorchCachingPool::allowed_memory_maximum() const {
  return static_cast<uint64_t>(options_.memory_fraction * static_cast<double>(device_.total_global_mem()));
}

void PytorchCachingPool::release_block(Block* b) {
  if (b->is_split() || b->allocated || b->segment) throw std::logic_error("pytorch-caching: releasing part of a segment");
  pool_of(b->small).blocks.erase(b);
  device_.free(b->ptr);
  ++device_frees_;
  --segments_;
  reserved_ -= b->size;
  delete_block(b);
}

bool PytorchCachingPool::release_available_cached_blocks(BlockPool& pool, int stream, uint64_t size) {
  if (options_.max_split_size == UINT64_MAX) return false;
  Block key;
  key.stream = stream;
  key.size = std::max(size, options_.max_split_size);
  auto it = pool.blocks.lower_bound(&key);
  if (it == pool.blocks.end() || (*it)->stream != stream || (*it)->segment) {
    // No single oversize block is large enough: free oversize blocks from the largest down (blocks of
    // expandable segments are passed over: they cannot be cudaFree'd).
    if (it == pool.blocks.begin()) return false;
    uint64_t released = 0;
    --it;
    while (released < key.size && (*it)->size >= options_.max_split_size && (*it)->stream == stream) {
      Block* cur = *it;
      const bool is_first = it == pool.blocks.begin();
      if (!is_first) --it;
      if (!cur->segment) {
        released += cur->size;
        release_block(cur);
      }
      if (is_first) break;
    }
    return released >= key.size;
  }
  release_block(*it);
  return true;
}

void PytorchCachingPool::release_pool(BlockPool& pool) {
  std::vector<Block*> to_unmap;  // unmapping changes the set: gather first
  for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
    Block* b = *it++;
    if (b->segment) to_unmap.push_back(b);
    else if (!b->is_split()) release_block(b);
  }
  for (Block* b : to_unmap) {
    unmap_block(pool, b);  // merges only with unmapped neighbours: the other gathered blocks stay valid
    if (!b->is_split()) release_expandable_segment(pool, b);
  }
}

void PytorchCachingPool::release_cached_blocks() {
  ++sync_all_streams_;  // synchronize_and_free_events: waits for every stream
  release_pool(large_);
  release_pool(small_);
}

void PytorchCachingPool::garbage_collect_cached_blocks() {
  // A fraction of the allowed maximum, itself already truncated to whole bytes (as PyTorch computes both).
  const auto gc_threshold = static_cast<uint64_t>(options_.garbage_collection_threshold *
                                                  static_cast<double>(allowed_memory_maximum()));
  if (reserved_ <= gc_threshold) return;
  const uint64_t target = reserved_ - gc_threshold;
  uint64_t total_age = 0;
  int freeable = 0;
  for (const Block* b : large_.blocks)
    if (!b->is_split()) {
      total_age += large_.get_free_blocks_call_count - b->gc_count_base;
      ++freeable;
    }
  if (freeable == 0) return;
  uint64_t reclaimed = 0;
  bool freed = true;
  // Free the blocks at least as old as the average, again and again, until the target is met.
  while (reclaimed < target && freed && freeable > 0) {
    const double age_threshold = static_cast<double>(total_age) / freeable;
    freed = false;
    for (auto it = large_.blocks.begin(); it != large_.blocks.end();) {
      Block* b = *it++;
      const uint64_t age = large_.get_free_blocks_call_count - b->gc_count_base;
      if (!b->is_split() && static_cast<double>(age) >= age_threshold) {
        freed = true;
        reclaimed += b->size;
        total_age -= age;
        --freeable;
        ++gc_released_blocks_;
        release_block(b);
      }
    }
  }
}

std::optional<DevPtr> PytorchCachingPool::allocate(const AllocRequest& req) {
  const uint64_t size = round_size(req.bytes, options_.roundup_power2_divisions);
  BlockPool& pool = pool_of(size <= kSmallSize);
  const uint64_t alloc_size = allocation_size(size);
  Block* b = get_free_block(pool, req.stream, size);
  if (b) {
    ++cache_hits_;
  } else {
    if (options_.memory_fraction > 0.0 && options_.garbage_collection_threshold > 0.0)
      garbage_collect_cached_blocks();
    b = alloc_block(pool, req.stream, size, alloc_size, false);
    if (!b && release_available_cached_blocks(pool, req.stream, size))
      b = alloc_block(pool, req.stream, size, alloc_size, false);
    if (!b) {
      release_cached_blocks();
      b = alloc_block(pool, req.stream, size, alloc_size, true);
    }
  }
  if (!b) {
    ++stats_.num_ooms;
    return std::nullopt;
  }
  if (should_split(b, size)) {
    // The request takes the low part; the rest goes back to the pool as a free block of the same segment.
    Block* rest = new_block(b->ptr + size, b->size - size, b->stream, b->small);
    rest->segment = b->segment;
    b->size = size;
    rest->next = b->next;
    if (rest->next) rest->next->prev = rest;
    rest->prev = b;
    b->next = rest;
    insert_free(pool, rest);
    ++splits_;
  }
  b->allocated = true;
  b->requested = req.bytes;
  if (b->size >= options_.max_split_size) ++oversize_allocations_;
  note_alloc(stats_, req.bytes, b->size);
  return b->ptr;
}

// Merges src, a neighbour of dst in its segment, into dst if src is free and mapped alike; returns the bytes
// taken over (0: no merge). dst must be in no ordered set: its address and size change.
uint64_t PytorchCachingPool::try_merge_blocks(BlockPool& pool, Block* dst, Block* src) {
  if (!src || src->allocated || src->mapped != dst->mapped) return 0;
  (src->mapped ? pool.blocks.erase(src) : pool.unmapped.erase(src));
  const uint64_t taken = src->size;
  if (dst->prev == src) {
    dst->prev = src->prev;
    if (dst->prev) dst->prev->next = dst;
    const DevPtr at = src->ptr;
    delete_block(src);
    rekey(dst, at);
  } else {
    dst->next = src->next;
    if (dst->next) dst->next->prev = dst;
    delete_block(src);
  }
  dst->size += taken;
  return taken;
}

void PytorchCachingPool::free_block(Block* b) {
  BlockPool& pool = pool_of(b->small);
  try_merge_blocks(pool, b, b->prev);
  try_merge_blocks(pool, b, b->next);
  insert_free(pool, b);
}

void PytorchCachingPool::deallocate(DevPtr p) {
  auto it = blocks_.find(p);
  if (it == blocks_.end() || !it->second->allocated)
    throw std::logic_error("pytorch-caching: free of an address it did not allocate");
  Block* b = it->second.get();
  b->allocated = false;
  note_free(stats_, b->requested, b->size);
  free_block(b);
}

nlohmann::json PytorchCachingPool::report() const {
  uint64_t cached = 0, inactive_split = 0;
  for (const BlockPool* pool : {&small_, &large_})
    for (const Block* b : pool->blocks) {
      cached += b->size;
      if (b->is_split() && !b->segment) inactive_split += b->size;  // PyTorch leaves expandable blocks out
    }
  return {{"reserved_bytes", reserved_},
          {"segments", segments_},
          {"device_mallocs", device_mallocs_},
          {"device_frees", device_frees_},
          {"failed_device_mallocs", failed_device_mallocs_},
          {"num_alloc_retries", alloc_retries_},
          {"num_sync_all_streams", sync_all_streams_},
          {"cache_hits", cache_hits_},
          {"splits", splits_},
          {"oversize_allocations", oversize_allocations_},
          {"gc_released_blocks", gc_released_blocks_},
          {"cached_bytes", cached},
          {"inactive_split_bytes", inactive_split},
          {"expandable_segments", segments_by_base_.size()},
          {"segment_maps", segment_maps_},
          {"segment_unmaps", segment_unmaps_}};
}

void register_pytorch_caching(PoolRegistry& r) {
  r.add({"pytorch-caching",
         "PyTorch CUDACachingAllocator: 512 B rounding, small/large pools, per-stream best fit, empty-cache retry",
         PytorchCachingOptions::parameters().specs(), [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           return std::make_unique<PytorchCachingPool>(d, PytorchCachingOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
