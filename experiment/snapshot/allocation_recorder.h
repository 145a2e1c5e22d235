#pragma once
// Records, in the order they happen, the calls a run makes into its pool (allocate, deallocate) and the device
// calls the pool makes beneath them (cudaMalloc/cudaFree, and the virtual-memory map/unmap of expandable
// segments). The executor's Trace has the tensors' allocs and frees with their times but not the pool's
// reservations; this log places each reservation inside the pool call that made it, which is what a PyTorch
// memory snapshot's segment_alloc/segment_free entries need (experiment/snapshot/memory_snapshot.h).
// Both are decorators: every call and counter is the wrapped object's, so a run with them is the same run.
#include <cstdint>
#include <map>
#include <vector>

#include "policies/pool/forwarding_device_memory.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

struct AllocationEvent {
  enum class Kind : uint8_t {
    PoolAllocate,    // PoolPolicy::allocate (`ok` false: it returned no memory)
    PoolDeallocate,  // PoolPolicy::deallocate
    DeviceMalloc,    // DeviceMemory::malloc that succeeded
    DeviceFree,
    DeviceMap,       // map_pages that succeeded
    DeviceUnmap,
  };
  Kind kind = Kind::PoolAllocate;
  DevPtr address = 0;
  uint64_t bytes = 0;  // PoolAllocate: the bytes asked for; device calls: the bytes reserved() grew or shrank by
  int stream = 0;      // PoolAllocate: the requesting stream; device calls: that of the pool call they are in
  bool ok = true;      // PoolAllocate only
};
// A pool call's entry comes before the device calls it makes, so each device call belongs to the last pool call
// logged before it (or to none: the pool's constructor, before the first).

class AllocationLog {
 public:
  const std::vector<AllocationEvent>& events() const { return events_; }
  void add(const AllocationEvent& e) { events_.push_back(e); }
  void set_result(size_t at, DevPtr address) {  // an allocate logged before its call returned this
    events_[at].address = address;
    events_[at].ok = true;
  }
  int current_stream = 0;  // the stream of the pool call under way (0 outside one)

 private:
  std::vector<AllocationEvent> events_;
};

class LoggingDeviceMemory : public ForwardingDeviceMemory {
 public:
  LoggingDeviceMemory(DeviceMemory& inner, AllocationLog& log) : ForwardingDeviceMemory(inner), log_(log) {}
  std::optional<DevPtr> malloc(uint64_t bytes) override;
  void free(DevPtr p) override;
  bool map_pages(DevPtr at, uint64_t bytes) override;
  void unmap_pages(DevPtr at, uint64_t bytes) override;

 private:
  AllocationLog& log_;
  std::map<DevPtr, uint64_t> sizes_;  // live mallocs: cudaFree takes only the pointer
};

class LoggingPool : public PoolPolicy {
 public:
  LoggingPool(PoolPolicy& inner, AllocationLog& log) : inner_(inner), log_(log) {}
  std::string name() const override { return inner_.name(); }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;
  void iteration_begin(int iteration) override { inner_.iteration_begin(iteration); }
  void iteration_end(int iteration) override { inner_.iteration_end(iteration); }
  const PoolStats& stats() const override { return inner_.stats(); }
  nlohmann::json report() const override { return inner_.report(); }
  uint64_t up_front_bytes() const override { return inner_.up_front_bytes(); }
  bool holds_frees_for_other_streams() const override { return inner_.holds_frees_for_other_streams(); }

 private:
  PoolPolicy& inner_;
  AllocationLog& log_;
  std::map<DevPtr, int> streams_;  // live allocations' streams, for the device frees their deallocate makes
};

}  // namespace dlsim
