#pragma once
// `cnmem`: NVIDIA's cnmem 1.0 pool (NVIDIA/cnmem src/cnmem.cpp), modelled call for call:
// - every size is rounded up to 512 B (CNMEM_GRANULARITY);
// - cnmemInit reserves one region up front: `init_size_mb`, or when 0 half of cudaDeviceProp::totalGlobalMem
//   (DeviceMemory::total_global_mem: the whole device, the CUDA context's share included); a size must be
//   below totalGlobalMem, as cnmemInit checks, and then fit in what the device has left (cudaMalloc);
// - a root manager (the NULL stream, dlsim stream 0) and one child manager per other stream, registered on
//   the stream's first allocation (cnmemRegisterStream); `stream_children=false` sends every stream to the
//   root, as frameworks that pass no streams to cnmemInit do;
// - each manager: best fit over its address-ordered free list (ties: lowest address), the block keeps the low
//   `size` bytes and the remainder stays free; a miss grows the manager: the root by cudaMalloc of exactly the
//   rounded size (unless `cannot_grow`), a child by asking the root for exactly that size;
// - free coalesces with both free neighbours but never across a "head" (the first byte of a cudaMalloc'd or
//   parent-granted region); nothing is returned to CUDA or the parent before finalisation;
// - on out-of-memory, stealing (unless `cannot_steal`): a child takes a best-fit piece of a sibling's free
//   block through the root, the root takes one from a child; the piece becomes a head block of the thief.
// Left out: CNMEM_FLAGS_MANAGED (cudaMallocManaged + prefetch; dlsim has no unified memory), per-stream initial
// reservations (streamSizes; always 0 here), multiple devices, and the time of the cudaStreamSynchronize calls,
// which are only counted (report: stream_syncs) assuming non-blocking streams. One deliberate deviation: when
// the root steals, cnmem pushes a second "used" entry for the stolen piece (so it is never coalesced again);
// here the root's one entry for it becomes a head block, which has the same effect without the duplicate.
// Checked by: cnmem_pool_test.cc (the rules above, call by call), pool_checker_test.cc (no overlap, every byte
// accounted for), tests/scenarios/pools/resnet50-h100-cnmem.yaml, results/pools.md, and against NVIDIA's own
// cnmem.cpp replaying the same traces call for call (tests/upstream/, off by default: it needs the source).
#include <map>
#include <memory>
#include <vector>

#include "common/param_binding.h"
#include "policies/pool/pool_policy.h"

namespace dlsim {

// The pool's options in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h).
struct CnmemOptions {
  uint64_t init_size_bytes = 0;  // 0: half the device's totalGlobalMem
  bool cannot_grow = false;      // CNMEM_FLAGS_CANNOT_GROW (root only; children always may ask the root)
  bool cannot_steal = false;     // CNMEM_FLAGS_CANNOT_STEAL
  bool stream_children = true;   // one child manager per non-zero stream

  static const ParamBindings<CnmemOptions>& parameters();
  bool operator==(const CnmemOptions&) const = default;
};

class CnmemPool : public PoolPolicy {
 public:
  static constexpr uint64_t kGranularity = 512;

  // Reserves the initial region; throws ConfigError when the device cannot hold it.
  CnmemPool(DeviceMemory& device, const CnmemOptions& options);

  std::string name() const override { return "cnmem"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;  // throws std::logic_error on a pointer it did not hand out
  const PoolStats& stats() const override { return stats_; }
  nlohmann::json report() const override;
  uint64_t up_front_bytes() const override { return initial_reservation_; }  // cnmemInit's region

 private:
  struct Block {
    uint64_t size = 0;
    bool head = false;  // first byte of a cudaMalloc'd / parent-granted / stolen region: never merged into prev
  };
  struct Manager {
    int stream = 0;
    bool is_root = false;
    std::map<DevPtr, Block> free;  // address-ordered, as cnmem keeps its free list
    std::map<DevPtr, Block> used;  // cnmem's used list is unordered; only lookup by address matters
  };
  struct Live {
    Manager* owner;
    uint64_t requested;
    uint64_t size;
  };

  Manager& manager_for(int stream);
  std::optional<DevPtr> manager_allocate(Manager& m, uint64_t size);
  bool grow(Manager& m, uint64_t size);
  std::map<DevPtr, Block>::iterator best_fit(Manager& m, uint64_t size);
  // Takes the low `size` bytes of free block `it`; the rest stays free, as a head block when `stolen`.
  std::pair<DevPtr, Block> extract(Manager& m, std::map<DevPtr, Block>::iterator it, uint64_t size, bool stolen);
  void release(Manager& m, DevPtr p);
  std::optional<DevPtr> steal(Manager& thief, uint64_t size);
  std::optional<DevPtr> steal_from_children(uint64_t size);

  DeviceMemory& device_;
  CnmemOptions options_;
  PoolStats stats_;
  Manager root_;
  std::vector<std::unique_ptr<Manager>> children_;  // registration order: the order stealing tries them
  std::map<int, Manager*> child_by_stream_;
  std::map<DevPtr, Live> live_;
  uint64_t reserved_ = 0;
  uint64_t initial_reservation_ = 0;
  uint64_t device_mallocs_ = 0;
  uint64_t failed_device_mallocs_ = 0;
  uint64_t parent_grants_ = 0;
  uint64_t steals_ = 0;
  uint64_t stream_syncs_ = 0;
};

void register_cnmem(PoolRegistry& r);

}  // namespace dlsim
