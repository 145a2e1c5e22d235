#include "policies/pool/virtual_device_memory.h"

#include <stdexcept>

namespace dlsim {

namespace {
constexpr uint64_t kAlign = 512;
uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
}  // namespace

VirtualDeviceMemory::VirtualDeviceMemory(uint64_t capacity_bytes) : capacity_(capacity_bytes) {}

std::optional<DevPtr> VirtualDeviceMemory::malloc(uint64_t bytes) {
  ++malloc_calls_;
  const uint64_t size = align_up(bytes == 0 ? 1 : bytes);
  if (size > capacity_ - reserved_) return std::nullopt;
  DevPtr at = top_;
  for (auto it = holes_.begin(); it != holes_.end(); ++it) {  // first fit: deterministic, reuses addresses
    if (it->second >= size) {
      at = it->first;
      const uint64_t rest = it->second - size;
      holes_.erase(it);
      if (rest) holes_.emplace(at + size, rest);
      break;
    }
  }
  if (at == top_) top_ += size;
  live_.emplace(at, size);
  reserved_ += size;
  bytes_malloced_ += size;
  if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
  return at;
}

void VirtualDeviceMemory::free(DevPtr p) {
  auto it = live_.find(p);
  if (it == live_.end()) throw std::logic_error("cudaFree of an address that is not allocated");
  ++free_calls_;
  uint64_t start = it->first, size = it->second;
  reserved_ -= size;
  bytes_freed_ += size;
  live_.erase(it);
  // Coalesce with neighbouring holes; a hole that reaches the top lowers the top.
  auto next = holes_.lower_bound(start);
  if (next != holes_.end() && next->first == start + size) {
    size += next->second;
    holes_.erase(next);
  }
  auto prev = holes_.lower_bound(start);
  if (prev != holes_.begin()) {
    --prev;
    if (prev->first + prev->second == start) {
      start = prev->first;
      size += prev->second;
      holes_.erase(prev);
    }
  }
  if (start + size == top_) {
    top_ = start;
  } else {
    holes_.emplace(start, size);
  }
}

}  // namespace dlsim
