#include "policies/pool/pool_checker.h"

#include <cstdio>
#include <iterator>
#include <string>

namespace dlsim {

namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
}  // namespace

std::optional<DevPtr> RecordingDeviceMemory::malloc(uint64_t bytes) {
  const uint64_t before = inner_.reserved();
  auto p = inner_.malloc(bytes);
  if (!p) return p;
  const uint64_t charged = inner_.reserved() - before;
  auto next = ranges_.lower_bound(*p);
  const bool overlaps_next = next != ranges_.end() && next->first < *p + bytes;
  const bool overlaps_prev = next != ranges_.begin() && std::prev(next)->first + std::prev(next)->second.bytes > *p;
  if (overlaps_next || overlaps_prev)
    throw PoolInvariantError("device handed out " + hex(*p) + " overlapping a range the pool still holds");
  ranges_.emplace(*p, Range{bytes, charged});
  range_bytes_ += bytes;
  charged_bytes_ += charged;
  return p;
}

void RecordingDeviceMemory::free(DevPtr p) {
  auto it = ranges_.find(p);
  if (it == ranges_.end()) throw PoolInvariantError("pool cudaFree'd " + hex(p) + ", which it does not hold");
  if (on_free) on_free(p, it->second.bytes);
  range_bytes_ -= it->second.bytes;
  charged_bytes_ -= it->second.charged;
  ranges_.erase(it);
  inner_.free(p);
}

namespace {
// The entry of `m` (address -> bytes, disjoint) that contains [p, p + bytes), or m.end().
std::map<DevPtr, uint64_t>::const_iterator containing(const std::map<DevPtr, uint64_t>& m, DevPtr p, uint64_t bytes) {
  auto it = m.upper_bound(p);
  if (it == m.begin()) return m.end();
  --it;
  return it->first + it->second >= p + bytes ? it : m.end();
}
bool overlaps(const std::map<DevPtr, uint64_t>& m, DevPtr p, uint64_t bytes) {
  auto next = m.lower_bound(p);
  return (next != m.end() && next->first < p + bytes) ||
         (next != m.begin() && std::prev(next)->first + std::prev(next)->second > p);
}
}  // namespace

std::optional<DevPtr> RecordingDeviceMemory::reserve_address_range(uint64_t bytes) {
  auto p = inner_.reserve_address_range(bytes);
  if (!p) return p;
  auto r = ranges_.lower_bound(*p);
  const bool meets_malloc = (r != ranges_.end() && r->first < *p + bytes) ||
                            (r != ranges_.begin() && std::prev(r)->first + std::prev(r)->second.bytes > *p);
  if (meets_malloc || overlaps(address_ranges_, *p, bytes))
    throw PoolInvariantError("device reserved address range " + hex(*p) + " over memory the pool holds");
  address_ranges_.emplace(*p, bytes);
  return p;
}

void RecordingDeviceMemory::release_address_range(DevPtr at) {
  auto it = address_ranges_.find(at);
  if (it == address_ranges_.end())
    throw PoolInvariantError("pool released address range " + hex(at) + ", which it did not reserve");
  if (overlaps(mapped_, at, it->second))
    throw PoolInvariantError("pool released address range " + hex(at) + " with pages still mapped in it");
  address_ranges_.erase(it);
  inner_.release_address_range(at);
}

bool RecordingDeviceMemory::map_pages(DevPtr at, uint64_t bytes) {
  const auto range = containing(address_ranges_, at, bytes);
  if (range == address_ranges_.end())
    throw PoolInvariantError("pool mapped " + hex(at) + "+" + std::to_string(bytes) +
                             " outside the address ranges it reserved");
  if (overlaps(mapped_, at, bytes)) throw PoolInvariantError("pool mapped " + hex(at) + " twice");
  const uint64_t before = inner_.reserved();
  if (!inner_.map_pages(at, bytes)) return false;
  charged_bytes_ += inner_.reserved() - before;
  range_bytes_ += bytes;
  // Join with adjacent runs of the same address range, so that a block spanning several pages lies in one run.
  DevPtr start = at;
  uint64_t len = bytes;
  auto next = mapped_.find(at + bytes);
  if (next != mapped_.end() && at + bytes < range->first + range->second) {
    len += next->second;
    mapped_.erase(next);
  }
  auto prev = mapped_.lower_bound(at);
  if (at > range->first && prev != mapped_.begin() && std::prev(prev)->first + std::prev(prev)->second == at) {
    --prev;
    start = prev->first;
    len += prev->second;
    mapped_.erase(prev);
  }
  mapped_.emplace(start, len);
  return true;
}

void RecordingDeviceMemory::unmap_pages(DevPtr at, uint64_t bytes) {
  auto run = containing(mapped_, at, bytes);
  if (run == mapped_.end())
    throw PoolInvariantError("pool unmapped " + hex(at) + "+" + std::to_string(bytes) + ", which is not mapped");
  if (on_free) on_free(at, bytes);
  const DevPtr start = run->first;
  const uint64_t len = run->second;
  mapped_.erase(run);
  if (at > start) mapped_.emplace(start, at - start);
  if (at + bytes < start + len) mapped_.emplace(at + bytes, start + len - (at + bytes));
  range_bytes_ -= bytes;
  const uint64_t before = inner_.reserved();
  inner_.unmap_pages(at, bytes);
  charged_bytes_ -= before - inner_.reserved();
}

bool RecordingDeviceMemory::holds(DevPtr p, uint64_t extent) const {
  auto r = ranges_.upper_bound(p);
  if (r != ranges_.begin() && std::prev(r)->first + std::prev(r)->second.bytes >= p + extent) return true;
  return containing(mapped_, p, extent) != mapped_.end();
}

CheckedPool::CheckedPool(DeviceMemory& device, const PoolFactory& make_pool) : recorder_(device) {
  recorder_.on_free = [this](DevPtr p, uint64_t bytes) {
    auto it = live_.lower_bound(p);
    if (it != live_.end() && it->first < p + bytes)
      fail("cudaFree of range " + hex(p) + "+" + std::to_string(bytes) + " while block " + hex(it->first) +
           " in it is live");
    if (it != live_.begin() && std::prev(it)->first + std::prev(it)->second.extent > p)
      fail("cudaFree of range " + hex(p) + " while block " + hex(std::prev(it)->first) + " reaches into it");
  };
  pool_ = make_pool(recorder_);
  check_counters();
}

void CheckedPool::fail(const std::string& what) const {
  throw PoolInvariantError(pool_ ? pool_->name() + ": " + what : what);
}

std::optional<DevPtr> CheckedPool::allocate(const AllocRequest& req) {
  auto p = pool_->allocate(req);
  if (!p) {
    check_counters();
    return p;
  }
  const uint64_t extent = req.bytes == 0 ? 1 : req.bytes;
  auto next = live_.lower_bound(*p);
  if (next != live_.end() && next->first < *p + extent)
    fail("block " + hex(*p) + "+" + std::to_string(extent) + " overlaps live block " + hex(next->first));
  if (next != live_.begin() && std::prev(next)->first + std::prev(next)->second.extent > *p)
    fail("block " + hex(*p) + " overlaps live block " + hex(std::prev(next)->first));
  if (!recorder_.holds(*p, extent))
    fail("block " + hex(*p) + "+" + std::to_string(extent) + " is not inside memory the pool reserved");
  live_.emplace_hint(next, *p, Live{req.bytes, extent});
  live_requested_ += req.bytes;
  ++allocs_;
  check_counters();
  return p;
}

void CheckedPool::deallocate(DevPtr p) {
  auto it = live_.find(p);
  if (it == live_.end()) fail("free of " + hex(p) + ", which is not a live block (double free?)");
  live_requested_ -= it->second.requested;
  live_.erase(it);  // before the pool runs: it may cudaFree the block's segment right away
  ++frees_;
  pool_->deallocate(p);
  check_counters();
}

void CheckedPool::check_counters() const {
  ++checks_;
  const PoolStats& s = pool_->stats();
  if (s.requested_bytes != live_requested_)
    fail("stats.requested_bytes " + std::to_string(s.requested_bytes) + " != live requested " +
         std::to_string(live_requested_));
  if (s.num_allocs != allocs_ || s.num_frees != frees_)
    fail("stats count " + std::to_string(s.num_allocs) + " allocs / " + std::to_string(s.num_frees) +
         " frees, the checker saw " + std::to_string(allocs_) + " / " + std::to_string(frees_));
  if (s.allocated_bytes < s.requested_bytes) fail("allocated_bytes below requested_bytes");
  if (s.allocated_bytes > recorder_.range_bytes())
    fail("allocated_bytes " + std::to_string(s.allocated_bytes) + " exceed the reserved " +
         std::to_string(recorder_.range_bytes()));
  if (s.peak_allocated_bytes < s.allocated_bytes || s.peak_requested_bytes < s.requested_bytes)
    fail("a peak is below the current value");
  if (recorder_.reserved() != recorder_.baseline_reserved() + recorder_.charged_bytes())
    fail("the device's reserved bytes do not add up to the ranges the pool holds");
  const auto rep = pool_->report();
  if (rep.contains("reserved_bytes") && rep["reserved_bytes"].get<uint64_t>() != recorder_.range_bytes())
    fail("report.reserved_bytes " + rep["reserved_bytes"].dump() + " != bytes of held device ranges " +
         std::to_string(recorder_.range_bytes()));
}

void CheckedPool::check_now() const {
  check_counters();
  const auto& ranges = recorder_.ranges();
  DevPtr end_of_prev = 0;
  bool first = true;
  for (const auto& [p, l] : live_) {
    if (!first && p < end_of_prev) fail("live blocks overlap at " + hex(p));
    first = false;
    end_of_prev = p + l.extent;
    if (!recorder_.holds(p, l.extent)) fail("live block " + hex(p) + " is outside the reserved ranges");
  }
  DevPtr range_end = 0;
  first = true;
  for (const auto& [p, r] : ranges) {
    if (!first && p < range_end) fail("device ranges overlap at " + hex(p));
    first = false;
    range_end = p + r.bytes;
    if (overlaps(recorder_.mapped_runs(), p, r.bytes) || overlaps(recorder_.address_ranges(), p, r.bytes))
      fail("device range " + hex(p) + " overlaps mapped pages or a reserved address range");
  }
  for (const auto& [p, bytes] : recorder_.mapped_runs())
    if (containing(recorder_.address_ranges(), p, bytes) == recorder_.address_ranges().end())
      fail("mapped pages at " + hex(p) + " are outside the reserved address ranges");
}

void CheckedPool::check_all_freed(uint64_t expected_reserved) const {
  check_now();
  if (!live_.empty()) fail(std::to_string(live_.size()) + " blocks are still live");
  const PoolStats& s = pool_->stats();
  if (s.allocated_bytes != 0 || s.requested_bytes != 0)
    fail("after freeing everything, allocated_bytes=" + std::to_string(s.allocated_bytes));
  if (recorder_.range_bytes() != expected_reserved)
    fail("after freeing everything the pool holds " + std::to_string(recorder_.range_bytes()) +
         " device bytes, expected " + std::to_string(expected_reserved));
}

}  // namespace dlsim
