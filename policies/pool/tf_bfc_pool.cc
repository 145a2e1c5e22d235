#include "policies/pool/tf_bfc_pool.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <tuple>

#include "common/config_error.h"
#include "policies/pool/pool_accounting.h"

namespace dlsim {

const ParamBindings<TfBfcOptions>& TfBfcOptions::parameters() {
  using O = TfBfcOptions;
  static const auto b = ParamBindings<O>()
      .add("allow_growth", &O::allow_growth,
           "grow by doubling regions from 2 MiB (false: TF's GPU default, take the whole limit at once)")
      .add("memory_limit_mb", &O::memory_limit, mebibytes(), "the most the allocator may reserve (0: device capacity)",
           ParamCheck::in_range(0, kMaxMebibytes))
      .add("garbage_collection", &O::garbage_collection, "on out-of-memory, free regions without live chunks and retry");
  return b;
}

bool TfBfcPool::ChunkLess::operator()(const Chunk* a, const Chunk* b) const {
  return std::tie(a->size, a->ptr) < std::tie(b->size, b->ptr);
}

uint64_t TfBfcPool::rounded_bytes(uint64_t bytes) { return round_up(bytes, kMinAllocationSize); }

int TfBfcPool::bin_for_size(uint64_t bytes) {
  const uint64_t v = std::max(bytes, kMinAllocationSize) / kMinAllocationSize;
  return std::min(kNumBins - 1, static_cast<int>(std::bit_width(v)) - 1);
}

TfBfcPool::TfBfcPool(DeviceMemory& device, const TfBfcOptions& options)
    : device_(device), options_(options), memory_limit_(options.memory_limit ? options.memory_limit : device.capacity()) {
  curr_region_allocation_bytes_ =
      rounded_bytes(options.allow_growth ? std::min(memory_limit_, kFirstGrowthRegion) : memory_limit_);
}

TfBfcPool::~TfBfcPool() = default;

TfBfcPool::Chunk* TfBfcPool::new_chunk(DevPtr ptr, uint64_t size) {
  auto c = std::make_unique<Chunk>();
  c->ptr = ptr;
  c->size = size;
  Chunk* raw = c.get();
  chunks_.emplace(ptr, std::move(c));
  return raw;
}

void TfBfcPool::insert_free(Chunk* c) { bins_[bin_for_size(c->size)].insert(c); }
void TfBfcPool::remove_free(Chunk* c) { bins_[bin_for_size(c->size)].erase(c); }

TfBfcPool::Chunk* TfBfcPool::find_chunk(uint64_t rounded) {
  for (int b = bin_for_size(rounded); b < kNumBins; ++b) {
    for (Chunk* c : bins_[b]) {
      if (c->size < rounded) continue;
      bins_[b].erase(c);
      if (c->size >= rounded * 2 || c->size - rounded >= kMaxInternalFragmentation) {
        // Split: the request keeps the low end, the rest is a new free chunk at the high end.
        Chunk* rest = new_chunk(c->ptr + rounded, c->size - rounded);
        c->size = rounded;
        rest->prev = c;
        rest->next = c->next;
        if (rest->next) rest->next->prev = rest;
        c->next = rest;
        insert_free(rest);
        ++splits_;
      }
      return c;
    }
  }
  return nullptr;
}

bool TfBfcPool::extend(uint64_t rounded) {
  const uint64_t available = (memory_limit_ - total_region_allocated_bytes_) / kMinAllocationSize * kMinAllocationSize;
  if (rounded > available) return false;
  bool increased = false;
  while (rounded > curr_region_allocation_bytes_) {
    curr_region_allocation_bytes_ *= 2;
    increased = true;
  }
  uint64_t bytes = std::min(curr_region_allocation_bytes_, available);
  auto p = device_.malloc(bytes);
  while (!p) {  // back-pedal: ask for 90 % until that would not hold the request
    ++backpedals_;
    // In single precision, as TF computes it (size_t times a float constant): at GiB sizes a float's ulp is 64 B
    // or more, so a double product lands on another 256-B multiple (tests/upstream's replay found it). Below about
    // 2.5 KiB, 90 % rounded up to 256 B is the same size again (2304 B): stop there, or a nearly full device is
    // asked for the same region forever (the pinned TSL loops there; XLA's later code guards it too).
    const uint64_t smaller = rounded_bytes(static_cast<uint64_t>(static_cast<float>(bytes) * kBackpedalFactor));
    if (smaller >= bytes || smaller < rounded) return false;
    bytes = smaller;
    p = device_.malloc(bytes);
  }
  if (!increased) curr_region_allocation_bytes_ *= 2;  // doubling regions: the next one is larger
  if (extends_++ == 0) first_region_bytes_ = bytes;
  total_region_allocated_bytes_ += bytes;
  regions_.emplace(*p, bytes);
  insert_free(new_chunk(*p, bytes));
  return true;
}

bool TfBfcPool::deallocate_free_regions(uint64_t rounded) {
  if (!options_.garbage_collection) return false;
  std::vector<DevPtr> free_regions;
  uint64_t free_bytes = 0;
  for (const auto& [start, bytes] : regions_) {
    bool any_use = false;
    for (const Chunk* c = chunks_.at(start).get(); c; c = c->next)
      if (c->in_use) {
        any_use = true;
        break;
      }
    if (!any_use) {
      free_regions.push_back(start);
      free_bytes += bytes;
    }
  }
  if (free_bytes == 0) return false;
  if (rounded > memory_limit_ - total_region_allocated_bytes_ + free_bytes) return false;  // would not help
  for (DevPtr start : free_regions) {
    for (Chunk* c = chunks_.at(start).get(); c;) {
      Chunk* next = c->next;
      remove_free(c);
      chunks_.erase(c->ptr);
      c = next;
    }
    device_.free(start);
    total_region_allocated_bytes_ -= regions_.at(start);
    regions_.erase(start);
    ++gc_freed_regions_;
  }
  return true;
}

TfBfcPool::Chunk* TfBfcPool::attempt(uint64_t rounded) {
  Chunk* c = find_chunk(rounded);
  if (!c && extend(rounded)) c = find_chunk(rounded);
  if (!c && deallocate_free_regions(rounded) && extend(rounded)) c = find_chunk(rounded);
  return c;
}

std::optional<DevPtr> TfBfcPool::allocate(const AllocRequest& req) {
  const uint64_t rounded = rounded_bytes(at_least_one_byte(req.bytes));
  Chunk* c = attempt(rounded);
  if (!c) {
    // AllocatorRetry: nothing frees memory while it waits (the simulated allocations are one sequence), so the
    // repeats fail as the first attempt did, each with its own back-pedalling cudaMallocs. The 10 s are not
    // charged: the pool has no clock, and a run that reaches this is out of memory anyway.
    ++retry_waits_;
    for (int a = 1; a < kAllocationAttempts && !c; ++a) c = attempt(rounded);
  }
  if (!c) {
    ++stats_.num_ooms;
    return std::nullopt;
  }
  c->in_use = true;
  c->requested = req.bytes;
  note_alloc(stats_, req.bytes, c->size);
  return c->ptr;
}

void TfBfcPool::deallocate(DevPtr p) {
  auto it = chunks_.find(p);
  if (it == chunks_.end() || !it->second->in_use) throw std::logic_error("tf-bfc: free of an address it did not allocate");
  Chunk* c = it->second.get();
  c->in_use = false;
  note_free(stats_, c->requested, c->size);
  if (Chunk* n = c->next; n && !n->in_use) {  // absorb a free next neighbour
    remove_free(n);
    c->size += n->size;
    c->next = n->next;
    if (c->next) c->next->prev = c;
    chunks_.erase(n->ptr);
  }
  if (Chunk* pv = c->prev; pv && !pv->in_use) {  // and be absorbed by a free previous one
    remove_free(pv);
    pv->size += c->size;
    pv->next = c->next;
    if (pv->next) pv->next->prev = pv;
    chunks_.erase(c->ptr);
    c = pv;
  }
  insert_free(c);
}

nlohmann::json TfBfcPool::report() const {
  uint64_t free_bytes = 0, largest = 0;
  for (const auto& bin : bins_)
    for (const Chunk* c : bin) {
      free_bytes += c->size;
      largest = std::max(largest, c->size);
    }
  // TF's fragmentation metric: the share of free memory outside the largest free chunk.
  const double fragmentation = free_bytes ? static_cast<double>(free_bytes - largest) / static_cast<double>(free_bytes) : 0.0;
  return {{"reserved_bytes", total_region_allocated_bytes_},
          {"memory_limit_bytes", memory_limit_},
          {"regions", regions_.size()},
          {"extends", extends_},
          {"backpedals", backpedals_},
          {"gc_freed_regions", gc_freed_regions_},
          {"retry_waits", retry_waits_},
          {"splits", splits_},
          {"next_region_bytes", curr_region_allocation_bytes_},
          {"free_bytes", free_bytes},
          {"largest_free_chunk", largest},
          {"fragmentation", fragmentation}};
}

void register_tf_bfc(PoolRegistry& r) {
  r.add({"tf-bfc", "TensorFlow BFC: 256 B rounding, 21 log2 bins, best fit, coalescing, doubling regions",
         TfBfcOptions::parameters().specs(), [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           return std::make_unique<TfBfcPool>(d, TfBfcOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
