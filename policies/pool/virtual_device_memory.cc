#include "policies/pool/virtual_device_memory.h"

#include <iterator>
#include <stdexcept>

namespace dlsim {

namespace {
constexpr uint64_t kAlign = 512;
uint64_t align_up(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }
}  // namespace

VirtualDeviceMemory::VirtualDeviceMemory(uint64_t capacity_bytes, uint64_t total_global_mem_bytes)
    : capacity_(capacity_bytes), total_global_mem_(total_global_mem_bytes == 0 ? capacity_bytes : total_global_mem_bytes) {
  if (total_global_mem_ < capacity_)
    throw std::invalid_argument("VirtualDeviceMemory: total_global_mem below the capacity");
}

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
  if (at == top_) {
    if (size > kAddressRangeBase - top_)
      throw std::logic_error("VirtualDeviceMemory: malloc addresses would reach the virtual-memory ranges");
    top_ += size;
  }
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

namespace {
constexpr uint64_t kAddressLimit = ~uint64_t{0} - (VirtualDeviceMemory::kGranularity - 1);  // exclusive end
bool on_granularity(uint64_t v) { return v % VirtualDeviceMemory::kGranularity == 0; }
}  // namespace

std::optional<DevPtr> VirtualDeviceMemory::reserve_address_range(uint64_t bytes) {
  if (bytes == 0 || bytes > kAddressLimit - kAddressRangeBase) return std::nullopt;
  const uint64_t size = (bytes + kGranularity - 1) / kGranularity * kGranularity;
  // Lowest gap that fits (ranges are few: one per growing segment), so released ranges are reused.
  DevPtr at = kAddressRangeBase;
  for (const auto& [start, len] : ranges_) {
    if (start - at >= size) break;
    at = start + len;
  }
  if (at > kAddressLimit || kAddressLimit - at < size) return std::nullopt;
  ranges_.emplace(at, size);
  address_bytes_ += size;
  return at;
}

void VirtualDeviceMemory::release_address_range(DevPtr at) {
  auto it = ranges_.find(at);
  if (it == ranges_.end()) throw std::logic_error("cuMemAddressFree of an address range that is not reserved");
  auto m = mappings_.lower_bound(at);
  if (m != mappings_.end() && m->first < at + it->second)
    throw std::logic_error("cuMemAddressFree of an address range that still has pages mapped");
  address_bytes_ -= it->second;
  ranges_.erase(it);
}

bool VirtualDeviceMemory::map_pages(DevPtr at, uint64_t bytes) {
  if (bytes == 0 || !on_granularity(at) || !on_granularity(bytes))
    throw std::logic_error("cuMemMap: address and size must be multiples of the 2 MiB granularity");
  auto r = ranges_.upper_bound(at);
  if (r == ranges_.begin() || std::prev(r)->first + std::prev(r)->second < at + bytes)
    throw std::logic_error("cuMemMap outside any reserved address range");
  auto next = mappings_.lower_bound(at);
  if ((next != mappings_.end() && next->first < at + bytes) ||
      (next != mappings_.begin() && std::prev(next)->first + std::prev(next)->second > at))
    throw std::logic_error("cuMemMap over pages that are already mapped");
  if (bytes > capacity_ - reserved_) return false;  // cuMemCreate: CUDA_ERROR_OUT_OF_MEMORY
  ++map_calls_;
  mappings_.emplace_hint(next, at, bytes);
  mapped_bytes_ += bytes;
  bytes_mapped_ += bytes;
  reserved_ += bytes;
  if (reserved_ > peak_reserved_) peak_reserved_ = reserved_;
  return true;
}

void VirtualDeviceMemory::unmap_pages(DevPtr at, uint64_t bytes) {
  // The range must consist of whole mappings, back to back: a physical allocation cannot be split.
  auto it = mappings_.find(at);
  DevPtr cur = at;
  while (it != mappings_.end() && it->first == cur && cur < at + bytes) cur += (it++)->second;
  if (bytes == 0 || cur != at + bytes)
    throw std::logic_error("cuMemUnmap of a range that is not a run of whole mappings");
  mappings_.erase(mappings_.find(at), it);
  ++unmap_calls_;
  mapped_bytes_ -= bytes;
  bytes_unmapped_ += bytes;
  reserved_ -= bytes;
}

}  // namespace dlsim
