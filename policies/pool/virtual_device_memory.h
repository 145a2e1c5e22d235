#pragma once
// The simulated GPU's cudaMalloc/cudaFree: a capacity, and addresses from a first-fit map of a virtual range.
// Out of memory when the bytes held would exceed the capacity: the driver maps physical pages into virtual
// ranges, so (unlike inside a pool) there is no external fragmentation at this level. Allocations are
// aligned to 512 bytes, as cudaMalloc's pointers are (at least 256).
// It also offers the virtual-memory calls (for expandable segments): address ranges are reserved in a separate
// high part of the address space (from kAddressRangeBase up, 2 MiB aligned), so they never meet malloc addresses,
// and cost no capacity; pages mapped into them count toward reserved() like malloc'd bytes.
#include <map>

#include "policies/pool/pool_policy.h"

namespace dlsim {

class VirtualDeviceMemory : public DeviceMemory {
 public:
  // `total_global_mem_bytes` is what cudaGetDeviceProperties reports (0: the capacity), usually the capacity
  // plus the CUDA context's reserve.
  explicit VirtualDeviceMemory(uint64_t capacity_bytes, uint64_t total_global_mem_bytes = 0);

  std::optional<DevPtr> malloc(uint64_t bytes) override;
  void free(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  uint64_t capacity() const override { return capacity_; }
  uint64_t total_global_mem() const override { return total_global_mem_; }
  uint64_t reserved() const override { return reserved_; }
  uint64_t peak_reserved() const override { return peak_reserved_; }
  uint64_t malloc_calls() const override { return malloc_calls_; }
  uint64_t free_calls() const override { return free_calls_; }
  uint64_t bytes_malloced() const override { return bytes_malloced_; }
  uint64_t bytes_freed() const override { return bytes_freed_; }
  size_t live_allocations() const { return live_.size(); }

  // Virtual memory. Misuse (mapping outside a reserved range or over a mapping, unmapping what is not mapped,
  // releasing a range that still has mappings, addresses not on the 2 MiB granularity) throws std::logic_error.
  static constexpr DevPtr kAddressRangeBase = DevPtr{1} << 47;  // 128 TiB: far above any malloc address
  static constexpr uint64_t kGranularity = 2ull << 20;           // cuMemGetAllocationGranularity on NVIDIA GPUs
  bool supports_virtual_memory() const override { return true; }
  std::optional<DevPtr> reserve_address_range(uint64_t bytes) override;
  void release_address_range(DevPtr at) override;
  bool map_pages(DevPtr at, uint64_t bytes) override;
  void unmap_pages(DevPtr at, uint64_t bytes) override;
  uint64_t map_calls() const override { return map_calls_; }
  uint64_t unmap_calls() const override { return unmap_calls_; }
  uint64_t bytes_mapped() const override { return bytes_mapped_; }
  uint64_t bytes_unmapped() const override { return bytes_unmapped_; }
  uint64_t mapped() const { return mapped_bytes_; }  // bytes currently mapped (part of reserved())
  uint64_t reserved_address_bytes() const { return address_bytes_; }
  size_t address_ranges() const { return ranges_.size(); }

 private:
  uint64_t capacity_;
  uint64_t total_global_mem_;
  uint64_t reserved_ = 0;
  uint64_t peak_reserved_ = 0;
  uint64_t malloc_calls_ = 0;
  uint64_t free_calls_ = 0;
  uint64_t bytes_malloced_ = 0;
  uint64_t bytes_freed_ = 0;
  std::map<DevPtr, uint64_t> live_;  // address -> size
  std::map<DevPtr, uint64_t> holes_; // free virtual ranges below top_, address -> size
  DevPtr top_ = 0;
  std::map<DevPtr, uint64_t> ranges_;    // reserved address ranges, address -> size
  std::map<DevPtr, uint64_t> mappings_;  // mapped physical allocations, address -> size
  uint64_t address_bytes_ = 0;
  uint64_t mapped_bytes_ = 0;
  uint64_t map_calls_ = 0;
  uint64_t unmap_calls_ = 0;
  uint64_t bytes_mapped_ = 0;
  uint64_t bytes_unmapped_ = 0;
};

}  // namespace dlsim
