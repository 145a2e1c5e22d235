#pragma once
// The runtime side shared by the two lifetime-aware pools (smartpool, planned): one device reservation holding
// a precomputed plan of slots, plus plain cudaMalloc for whatever falls outside the plan.
//
// A slot is handed out only if its bytes do not overlap any block still live in the reservation. The plan
// guarantees this when the program repeats exactly; when it does not (a tensor lives longer than in the
// profiled iteration), the request falls back to cudaMalloc instead of sharing memory. SINGA's SmartMemPool
// only checks the slot's own busy flag, which would hand out the same bytes twice in that case.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>

#include "policies/pool/pool_policy.h"

namespace dlsim {

class PlannedArena {
 public:
  explicit PlannedArena(DeviceMemory& device) : device_(device) {}

  // One cudaMalloc of `bytes` for the whole plan; false when the device is out of memory (or bytes is 0).
  bool reserve(uint64_t bytes);
  bool has_reservation() const { return reservation_bytes_ > 0; }
  uint64_t reservation_bytes() const { return reservation_bytes_; }

  // The slot [offset, offset + extent) of the reservation, or nullopt when its bytes are busy.
  std::optional<DevPtr> take_slot(uint64_t offset, uint64_t extent, uint64_t requested);
  // A cudaMalloc outside the plan (counted as a fallback); nullopt and a counted OOM when the device is full.
  std::optional<DevPtr> fallback(uint64_t requested);
  // Frees a slot (in the reservation) or a fallback block (cudaFree). Throws std::logic_error on an unknown
  // pointer.
  void release(DevPtr p);

  const PoolStats& stats() const { return stats_; }
  uint64_t served_from_plan() const { return served_; }
  uint64_t fallbacks() const { return fallbacks_; }
  // Bytes this pool holds from the device: the reservation plus live fallback blocks.
  uint64_t reserved_bytes() const { return reservation_bytes_ + fallback_bytes_; }
  uint64_t peak_fallback_bytes() const { return peak_fallback_bytes_; }
  // The figures both planning pools report: pool size, requests served from the plan, cudaMalloc fallbacks
  // before the plan took over (warm-up) and after it (requests outside the plan).
  void report_into(nlohmann::json& j, bool planning_started, uint64_t fallbacks_before_plan) const {
    j["pool_bytes"] = reservation_bytes_;
    j["served_from_pool"] = served_;
    j["warmup_cuda_mallocs"] = planning_started ? fallbacks_before_plan : fallbacks_;
    j["fallbacks"] = planning_started ? fallbacks_ - fallbacks_before_plan : 0;
    j["peak_fallback_bytes"] = peak_fallback_bytes_;
    j["reserved_bytes"] = reserved_bytes();
  }

 private:
  void note_alloc(uint64_t requested, uint64_t allocated);
  void note_free(uint64_t requested, uint64_t allocated);

  DeviceMemory& device_;
  DevPtr base_ = 0;
  uint64_t reservation_bytes_ = 0;
  struct Block {
    uint64_t requested;
    uint64_t extent;
  };
  std::map<DevPtr, Block> slots_;      // live blocks in the reservation, by address (pairwise disjoint)
  std::map<DevPtr, Block> fallback_;   // live cudaMalloc blocks
  uint64_t fallback_bytes_ = 0, peak_fallback_bytes_ = 0;
  uint64_t served_ = 0, fallbacks_ = 0;
  PoolStats stats_;
};

}  // namespace dlsim
