#pragma once
// A pool policy hands out device memory for tensors. Beneath it sits a DeviceMemory (the cudaMalloc/cudaFree
// of the simulated GPU, or an arena carved from one real cudaMalloc in validate/): the very same PoolPolicy
// object runs on both backends. Addresses are byte offsets in the device's address space.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/registry.h"

namespace dlsim {

using DevPtr = uint64_t;

// cudaMalloc and cudaFree as a pool sees them. Implementations count calls and bytes so that the executor
// can charge their time cost and report reservations.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual std::optional<DevPtr> malloc(uint64_t bytes) = 0;  // nullopt: out of device memory
  virtual void free(DevPtr p) = 0;
  virtual uint64_t capacity() const = 0;   // bytes the device offers
  // cudaDeviceProp::totalGlobalMem: the whole device, the CUDA context's share included. Pools that size
  // themselves from the device properties (cnmem's default: half of it) read this, not capacity().
  virtual uint64_t total_global_mem() const { return capacity(); }
  virtual uint64_t reserved() const = 0;   // bytes currently held through malloc
  virtual uint64_t peak_reserved() const = 0;
  virtual uint64_t malloc_calls() const = 0;
  virtual uint64_t free_calls() const = 0;
  virtual uint64_t bytes_malloced() const = 0;  // total bytes passed to successful malloc calls
  virtual uint64_t bytes_freed() const = 0;

  // The CUDA virtual-memory driver API (cuMemAddressReserve / cuMemCreate+cuMemMap / cuMemUnmap+cuMemRelease /
  // cuMemAddressFree), for pools that grow a segment in place (PyTorch's expandable_segments). Optional: the
  // defaults say "not supported", so a DeviceMemory that only has malloc/free needs none of this.
  virtual bool supports_virtual_memory() const { return false; }
  // Reserves virtual address space only (no capacity used); nullopt when none is left.
  virtual std::optional<DevPtr> reserve_address_range(uint64_t /*bytes*/) { return std::nullopt; }
  virtual void release_address_range(DevPtr /*at*/) {}
  // One call = one physical allocation (cuMemCreate) mapped at `at` inside a reserved range. Mapped bytes count
  // toward reserved(); false (nothing mapped) when they would exceed the capacity.
  virtual bool map_pages(DevPtr /*at*/, uint64_t /*bytes*/) { return false; }
  // Unmaps and releases whole earlier mappings covering exactly [at, at + bytes).
  virtual void unmap_pages(DevPtr /*at*/, uint64_t /*bytes*/) {}
  virtual uint64_t map_calls() const { return 0; }  // successful map_pages calls
  virtual uint64_t unmap_calls() const { return 0; }
  virtual uint64_t bytes_mapped() const { return 0; }  // totals over all calls, like bytes_malloced
  virtual uint64_t bytes_unmapped() const { return 0; }
};

struct PoolStats {
  uint64_t allocated_bytes = 0;       // bytes handed out to live tensors (after the pool's rounding)
  uint64_t peak_allocated_bytes = 0;
  uint64_t requested_bytes = 0;       // bytes asked for by live tensors (before rounding)
  uint64_t peak_requested_bytes = 0;
  uint64_t num_allocs = 0;
  uint64_t num_frees = 0;
  uint64_t num_ooms = 0;
};

// Who asks: the stream the tensor is used on. Pools may keep per-stream free lists (PyTorch does).
struct AllocRequest {
  uint64_t bytes = 0;
  int stream = 0;
};

class PoolPolicy {
 public:
  virtual ~PoolPolicy() = default;
  virtual std::string name() const = 0;
  // nullopt: out of memory after whatever the real allocator does first (free cached blocks and retry...).
  virtual std::optional<DevPtr> allocate(const AllocRequest& req) = 0;
  virtual void deallocate(DevPtr p) = 0;
  // The executor calls this before each training iteration (0-based; iteration 0's after setup) and
  // iteration_end after it. A pool that learns the iteration's allocations (planned) starts its profile at
  // iteration_begin(0), so that a setup block freed inside the iteration (a swapped weight's first residency)
  // is not taken for one of the iteration's own. Pools that learn from the iteration structure without being
  // told (smartpool) must not rely on either.
  virtual void iteration_begin(int /*iteration*/) {}
  virtual void iteration_end(int /*iteration*/) {}
  virtual const PoolStats& stats() const = 0;
  // Pool-specific figures for reports (e.g. smartpool: pattern found at, fallbacks). May be empty.
  virtual nlohmann::json report() const { return nlohmann::json::object(); }
  // What the executor does with a tensor that other streams also used when it is freed (sim/executor.h):
  // true: hold it back from the pool until those streams are past the free (PyTorch's record_stream), for pools
  // that place blocks as requests come; false: return it at once and order every later reuse after those
  // streams, for pools that follow a placement made in advance (a planned slot cannot wait for a held block;
  // MXNet's engine likewise orders a planned block's reuse after its readers).
  virtual bool holds_frees_for_other_streams() const { return true; }
  // Device bytes the pool took by its configuration rather than by demand: cnmem's cnmemInit region, tf-bfc's
  // first region without allow_growth (the whole memory limit). 0 for pools that grow on demand. A peak reserved
  // no larger than this is a reservation, not fragmentation (reports say so; issue 14's honest labels).
  virtual uint64_t up_front_bytes() const { return 0; }
};

using PoolRegistry = Registry<PoolPolicy, DeviceMemory&>;
// Every built-in pool, registered in a fixed order (policies/pool/builtin_pools.cc).
const PoolRegistry& pool_registry();

}  // namespace dlsim
