#include "validate/gpu/arena_device_memory.h"

#include <iterator>
#include <stdexcept>
#include <string>

namespace dlsim {

ArenaDeviceMemory::ArenaDeviceMemory(uint64_t arena_bytes, uint64_t capacity_bytes, uint64_t total_global_mem_bytes)
    : arena_bytes_(arena_bytes / kAlignment * kAlignment),
      capacity_(capacity_bytes),
      total_global_mem_(total_global_mem_bytes == 0 ? capacity_bytes : total_global_mem_bytes) {
  if (capacity_bytes == 0) throw std::invalid_argument("ArenaDeviceMemory: capacity is 0");
  if (total_global_mem_ < capacity_) throw std::invalid_argument("ArenaDeviceMemory: total_global_mem below the capacity");
  if (arena_bytes_ == 0) throw std::invalid_argument("ArenaDeviceMemory: arena of " + std::to_string(arena_bytes) + " bytes");
  holes_.emplace(0, arena_bytes_);
}

std::optional<DevPtr> ArenaDeviceMemory::malloc(uint64_t bytes) {
  ++malloc_calls_;
  // cudaMalloc(0) succeeds with a null pointer in CUDA; pools never ask for it, and we hand out 512 bytes so that
  // every live allocation has a distinct offset.
  const uint64_t rounded = bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  if (rounded > capacity_ || reserved_ + rounded > capacity_) return std::nullopt;  // the sim's OOM rule
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {  // first fit, lowest address
    if (it->second < rounded) continue;
    const DevPtr at = it->first;
    const uint64_t left = it->second - rounded;
    holes_.erase(it);
    if (left > 0) holes_.emplace(at + rounded, left);
    live_.emplace(at, rounded);
    reserved_ += rounded;
    bytes_malloced_ += rounded;  // as VirtualDeviceMemory counts: the aligned size
    if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
    if (at + rounded > high_water_) high_water_ = at + rounded;
    return at;
  }
  ++fragmentation_failures_;
  return std::nullopt;
}

void ArenaDeviceMemory::free(DevPtr p) {
  auto it = live_.find(p);
  if (it == live_.end())
    throw std::logic_error("ArenaDeviceMemory::free: offset " + std::to_string(p) + " was not handed out");
  uint64_t start = it->first;
  uint64_t size = it->second;
  live_.erase(it);
  ++free_calls_;
  reserved_ -= size;
  bytes_freed_ += size;
  // Coalesce with the hole after and the hole before, so that first fit sees maximal ranges.
  auto next = holes_.lower_bound(start);
  if (next != holes_.end() && next->first == start + size) {
    size += next->second;
    next = holes_.erase(next);
  }
  if (next != holes_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      holes_.erase(prev);
    }
  }
  holes_.emplace(start, size);
}

}  // namespace dlsim
