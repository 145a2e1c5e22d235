#include "policies/pool/planned_arena.h"

#include <algorithm>
#include <stdexcept>

namespace dlsim {

bool PlannedArena::reserve(uint64_t bytes) {
  if (reservation_bytes_ > 0) throw std::logic_error("PlannedArena::reserve called twice");
  if (bytes == 0) return false;
  auto p = device_.malloc(bytes);
  if (!p) return false;
  base_ = *p;
  reservation_bytes_ = bytes;
  return true;
}

std::optional<DevPtr> PlannedArena::take_slot(uint64_t offset, uint64_t extent, uint64_t requested) {
  if (reservation_bytes_ == 0 || offset + extent > reservation_bytes_) return std::nullopt;
  const DevPtr lo = base_ + offset, hi = lo + extent;
  auto next = slots_.lower_bound(lo);
  if (next != slots_.end() && next->first < hi) return std::nullopt;
  if (next != slots_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second.extent > lo) return std::nullopt;
  }
  slots_.emplace(lo, Block{requested, extent});
  ++served_;
  note_alloc(requested, extent);
  return lo;
}

std::optional<DevPtr> PlannedArena::fallback(uint64_t requested) {
  const uint64_t extent = std::max<uint64_t>(requested, 1);
  ++fallbacks_;
  auto p = device_.malloc(extent);
  if (!p) {
    ++stats_.num_ooms;
    return std::nullopt;
  }
  fallback_.emplace(*p, Block{requested, extent});
  fallback_bytes_ += extent;
  peak_fallback_bytes_ = std::max(peak_fallback_bytes_, fallback_bytes_);
  note_alloc(requested, extent);
  return p;
}

void PlannedArena::release(DevPtr p) {
  if (auto it = slots_.find(p); it != slots_.end()) {
    note_free(it->second.requested, it->second.extent);
    slots_.erase(it);
    return;
  }
  auto it = fallback_.find(p);
  if (it == fallback_.end()) throw std::logic_error("planned pool: free of an address it did not allocate");
  const Block b = it->second;
  fallback_.erase(it);
  device_.free(p);
  fallback_bytes_ -= b.extent;
  note_free(b.requested, b.extent);
}

void PlannedArena::note_alloc(uint64_t requested, uint64_t allocated) {
  ++stats_.num_allocs;
  stats_.allocated_bytes += allocated;
  stats_.requested_bytes += requested;
  stats_.peak_allocated_bytes = std::max(stats_.peak_allocated_bytes, stats_.allocated_bytes);
  stats_.peak_requested_bytes = std::max(stats_.peak_requested_bytes, stats_.requested_bytes);
}

void PlannedArena::note_free(uint64_t requested, uint64_t allocated) {
  ++stats_.num_frees;
  stats_.allocated_bytes -= allocated;
  stats_.requested_bytes -= requested;
}

}  // namespace dlsim
