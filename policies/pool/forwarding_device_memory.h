#pragma once
// A DeviceMemory that passes every call to another one: the base of decorators that watch the calls a pool makes
// (pool_checker.h's RecordingDeviceMemory checks them, experiment/snapshot/allocation_recorder.h's LoggingDeviceMemory logs them
// for memory snapshots) and override only the calls they watch.
#include "policies/pool/pool_policy.h"

namespace dlsim {

class ForwardingDeviceMemory : public DeviceMemory {
 public:
  explicit ForwardingDeviceMemory(DeviceMemory& inner) : inner_(inner) {}

  std::optional<DevPtr> malloc(uint64_t bytes) override { return inner_.malloc(bytes); }
  void free(DevPtr p) override { inner_.free(p); }
  uint64_t capacity() const override { return inner_.capacity(); }
  uint64_t total_global_mem() const override { return inner_.total_global_mem(); }
  uint64_t reserved() const override { return inner_.reserved(); }
  uint64_t peak_reserved() const override { return inner_.peak_reserved(); }
  uint64_t malloc_calls() const override { return inner_.malloc_calls(); }
  uint64_t free_calls() const override { return inner_.free_calls(); }
  uint64_t bytes_malloced() const override { return inner_.bytes_malloced(); }
  uint64_t bytes_freed() const override { return inner_.bytes_freed(); }
  bool supports_virtual_memory() const override { return inner_.supports_virtual_memory(); }
  std::optional<DevPtr> reserve_address_range(uint64_t bytes) override { return inner_.reserve_address_range(bytes); }
  void release_address_range(DevPtr at) override { inner_.release_address_range(at); }
  bool map_pages(DevPtr at, uint64_t bytes) override { return inner_.map_pages(at, bytes); }
  void unmap_pages(DevPtr at, uint64_t bytes) override { inner_.unmap_pages(at, bytes); }
  uint64_t map_calls() const override { return inner_.map_calls(); }
  uint64_t unmap_calls() const override { return inner_.unmap_calls(); }
  uint64_t bytes_mapped() const override { return inner_.bytes_mapped(); }
  uint64_t bytes_unmapped() const override { return inner_.bytes_unmapped(); }

 protected:
  DeviceMemory& inner_;
};

}  // namespace dlsim
