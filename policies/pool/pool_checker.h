#pragma once
// An invariant checker for any PoolPolicy. CheckedPool builds the pool on a recording DeviceMemory (so it sees
// every cudaMalloc/cudaFree the pool makes) and checks, on every call:
// - a new block does not overlap any live block;
// - every live block lies inside one range the pool obtained from the device and has not freed, or inside one
//   run of adjacent pages it mapped (virtual-memory calls), which must lie in an address range it reserved;
// - the pool never cudaFrees (or unmaps) a range that still holds a live block, nor frees a block twice;
// - the device ranges the pool holds never overlap and add up to what the device says is reserved;
// - PoolStats agree with the live blocks (requested bytes, alloc/free counts) and allocated <= reserved;
// - when the pool reports "reserved_bytes", that equals the bytes of the ranges it holds.
// check_all_freed() adds the end state: nothing allocated, every reserved byte accounted for.
// A violation throws PoolInvariantError; the pool's own out-of-memory answers (nullopt) are not violations.
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>

#include "policies/pool/forwarding_device_memory.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

class PoolInvariantError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

// Forwards to another DeviceMemory and remembers each live range by the size the pool asked for.
class RecordingDeviceMemory : public ForwardingDeviceMemory {
 public:
  explicit RecordingDeviceMemory(DeviceMemory& inner) : ForwardingDeviceMemory(inner), baseline_(inner.reserved()) {}

  std::optional<DevPtr> malloc(uint64_t bytes) override;
  void free(DevPtr p) override;
  std::optional<DevPtr> reserve_address_range(uint64_t bytes) override;
  void release_address_range(DevPtr at) override;
  bool map_pages(DevPtr at, uint64_t bytes) override;
  void unmap_pages(DevPtr at, uint64_t bytes) override;

  struct Range {
    uint64_t bytes;    // what the pool asked for: the most it may use
    uint64_t charged;  // what the device's reserved() grew by (its own rounding)
  };
  const std::map<DevPtr, Range>& ranges() const { return ranges_; }
  // Mapped pages, adjacent ones joined into one run (address -> bytes), and the reserved address ranges.
  const std::map<DevPtr, uint64_t>& mapped_runs() const { return mapped_; }
  const std::map<DevPtr, uint64_t>& address_ranges() const { return address_ranges_; }
  // Whether [p, p + extent) lies in one malloc'd range or one mapped run.
  bool holds(DevPtr p, uint64_t extent) const;
  // Bytes held through malloc plus bytes mapped.
  uint64_t range_bytes() const { return range_bytes_; }
  uint64_t charged_bytes() const { return charged_bytes_; }
  uint64_t baseline_reserved() const { return baseline_; }  // the device's reserved() before the pool
  // Called before a range is freed, so the checker can verify no live block remains in it.
  std::function<void(DevPtr, uint64_t)> on_free;

 private:
  uint64_t baseline_;
  std::map<DevPtr, Range> ranges_;
  std::map<DevPtr, uint64_t> mapped_;
  std::map<DevPtr, uint64_t> address_ranges_;
  uint64_t range_bytes_ = 0;
  uint64_t charged_bytes_ = 0;
};

class CheckedPool : public PoolPolicy {
 public:
  using PoolFactory = std::function<std::unique_ptr<PoolPolicy>(DeviceMemory&)>;

  // `device` must be used by nothing else while the pool lives (its reserved() is compared to the pool's).
  CheckedPool(DeviceMemory& device, const PoolFactory& make_pool);

  std::string name() const override { return pool_->name(); }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;
  void iteration_begin(int iteration) override { pool_->iteration_begin(iteration); }
  void iteration_end(int iteration) override { pool_->iteration_end(iteration); }
  const PoolStats& stats() const override { return pool_->stats(); }
  nlohmann::json report() const override { return pool_->report(); }
  uint64_t up_front_bytes() const override { return pool_->up_front_bytes(); }
  bool holds_frees_for_other_streams() const override { return pool_->holds_frees_for_other_streams(); }

  PoolPolicy& inner() { return *pool_; }
  const RecordingDeviceMemory& device() const { return recorder_; }
  size_t live_blocks() const { return live_.size(); }
  uint64_t checks() const { return checks_; }

  // The full set of invariants, scanning every block (allocate/deallocate check only what changed).
  void check_now() const;
  // After every block is freed: nothing allocated or requested, and the device holds exactly
  // `expected_reserved` bytes through this pool (0 for pools that release, all they took for those that don't).
  void check_all_freed(uint64_t expected_reserved) const;

 private:
  void check_counters() const;
  void fail(const std::string& what) const;

  RecordingDeviceMemory recorder_;
  std::unique_ptr<PoolPolicy> pool_;
  struct Live {
    uint64_t requested;  // as asked (may be 0)
    uint64_t extent;     // bytes the caller may touch: max(1, requested)
  };
  std::map<DevPtr, Live> live_;
  uint64_t live_requested_ = 0;
  uint64_t allocs_ = 0;
  uint64_t frees_ = 0;
  mutable uint64_t checks_ = 0;
};

}  // namespace dlsim
