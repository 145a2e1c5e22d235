#pragma once
// The simulated GPU's cudaMalloc/cudaFree: a capacity, and addresses from a first-fit map of a virtual range.
// Out of memory when the bytes held would exceed the capacity: the driver maps physical pages into virtual
// ranges, so (unlike inside a pool) there is no external fragmentation at this level. Allocations are
// aligned to 512 bytes, as cudaMalloc's pointers are (at least 256).
#include <map>

#include "policies/pool/pool_policy.h"

namespace dlsim {

class VirtualDeviceMemory : public DeviceMemory {
 public:
  explicit VirtualDeviceMemory(uint64_t capacity_bytes);

  std::optional<DevPtr> malloc(uint64_t bytes) override;
  void free(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  uint64_t capacity() const override { return capacity_; }
  uint64_t reserved() const override { return reserved_; }
  uint64_t peak_reserved() const override { return peak_reserved_; }
  uint64_t malloc_calls() const override { return malloc_calls_; }
  uint64_t free_calls() const override { return free_calls_; }
  uint64_t bytes_malloced() const override { return bytes_malloced_; }
  uint64_t bytes_freed() const override { return bytes_freed_; }
  size_t live_allocations() const { return live_.size(); }

 private:
  uint64_t capacity_;
  uint64_t reserved_ = 0;
  uint64_t peak_reserved_ = 0;
  uint64_t malloc_calls_ = 0;
  uint64_t free_calls_ = 0;
  uint64_t bytes_malloced_ = 0;
  uint64_t bytes_freed_ = 0;
  std::map<DevPtr, uint64_t> live_;  // address -> size
  std::map<DevPtr, uint64_t> holes_; // free virtual ranges below top_, address -> size
  DevPtr top_ = 0;
};

}  // namespace dlsim
