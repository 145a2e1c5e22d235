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
  const auto& ranges = recorder_.ranges();
  auto r = ranges.upper_bound(*p);
  if (r == ranges.begin() || std::prev(r)->first + std::prev(r)->second.bytes < *p + extent)
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
    auto r = ranges.upper_bound(p);
    if (r == ranges.begin() || std::prev(r)->first + std::prev(r)->second.bytes < p + l.extent)
      fail("live block " + hex(p) + " is outside the reserved ranges");
  }
  DevPtr range_end = 0;
  first = true;
  for (const auto& [p, r] : ranges) {
    if (!first && p < range_end) fail("device ranges overlap at " + hex(p));
    first = false;
    range_end = p + r.bytes;
  }
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
