#pragma once
// The real GPU's "cudaMalloc" beneath a pool policy in validate/: one arena obtained once from cudaMalloc, carved
// first fit at 512-byte alignment. Addresses are byte offsets into the arena (the CUDA executor adds the arena's
// base), so the pool object sees exactly what it sees in the simulator.
//
// Two limits, on purpose: `capacity` (the GpuSpec's memory, as VirtualDeviceMemory enforces it) decides out of
// memory exactly as in the simulator; `arena_bytes` (what the GPU could give us) is the physical room. The arena
// may be smaller than the capacity: a real H100 gives about 79.5 GiB to one cudaMalloc after its context and
// libraries, less than the 80594 MiB the hardware file models, while a run that uses a few GiB needs none of the
// difference. The simulated driver maps pages and never fragments, an arena can: a request that fits the capacity
// but finds no hole in the arena (fragmentation, or an arena smaller than the capacity) also fails, and is counted
// apart so that a report can tell the two causes apart.
#include <cstdint>
#include <map>

#include "policies/pool/pool_policy.h"

namespace dlsim {

class ArenaDeviceMemory : public DeviceMemory {
 public:
  static constexpr uint64_t kAlignment = 512;

  // Throws std::invalid_argument when capacity_bytes or arena_bytes is 0. `total_global_mem_bytes` is the modelled
  // device's totalGlobalMem (0: the capacity), so that a pool sizing itself from it does what it did in the sim.
  ArenaDeviceMemory(uint64_t arena_bytes, uint64_t capacity_bytes, uint64_t total_global_mem_bytes = 0);

  std::optional<DevPtr> malloc(uint64_t bytes) override;
  void free(DevPtr p) override;  // throws std::logic_error on an offset it did not hand out
  uint64_t capacity() const override { return capacity_; }
  uint64_t total_global_mem() const override { return total_global_mem_; }
  uint64_t reserved() const override { return reserved_; }
  uint64_t peak_reserved() const override { return peak_reserved_; }
  uint64_t malloc_calls() const override { return malloc_calls_; }
  uint64_t free_calls() const override { return free_calls_; }
  uint64_t bytes_malloced() const override { return bytes_malloced_; }  // aligned sizes, as the sim
  uint64_t bytes_freed() const override { return bytes_freed_; }

  uint64_t arena_bytes() const { return arena_bytes_; }
  // Highest end offset ever handed out: how much of the arena the run really touched.
  uint64_t high_water_mark() const { return high_water_; }
  // Failed calls that the capacity allowed but no arena hole could hold (the arena's own fragmentation, or an
  // arena smaller than the capacity).
  uint64_t arena_fragmentation_failures() const { return fragmentation_failures_; }
  size_t live_allocations() const { return live_.size(); }

 private:
  uint64_t arena_bytes_;
  uint64_t capacity_;
  uint64_t total_global_mem_;
  uint64_t reserved_ = 0;  // rounded bytes held
  uint64_t peak_reserved_ = 0;
  uint64_t high_water_ = 0;
  uint64_t malloc_calls_ = 0;
  uint64_t free_calls_ = 0;
  uint64_t bytes_malloced_ = 0;
  uint64_t bytes_freed_ = 0;
  uint64_t fragmentation_failures_ = 0;
  std::map<DevPtr, uint64_t> live_;   // offset -> rounded size
  std::map<DevPtr, uint64_t> holes_;  // free ranges, offset -> size, coalesced
};

}  // namespace dlsim
