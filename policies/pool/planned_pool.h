#pragma once
// `planned`: profile the first iteration, then serve every later iteration from an offline placement made by
// any registered planner (policies/planners), in one reservation.
//
// - Until the first iteration_end(), every request is a cudaMalloc and is recorded (size, pointer, order).
// - At iteration_end(0) the recorded blocks that were both allocated and freed inside that window become a
//   planning instance: buffer k = the k-th such Malloc, live over [its op index, its Free's op index). Blocks
//   still live at the boundary are persistent (parameters, optimizer state allocated at setup or in the first
//   iteration) or cross the boundary: they keep their cudaMalloc memory and are not planned. Setup allocations
//   made before the first iteration are in the window too, but being never freed they drop out the same way,
//   so they do not shift the positions of the iteration's own tensors.
// - In later iterations, Mallocs are matched in order with the planned buffers: a request whose size equals
//   the next planned buffer's takes its slot (if the slot's bytes are free) and advances the cursor; any other
//   request falls back to cudaMalloc (counted); the cursor restarts at each iteration_end().
#include <string>
#include <vector>

#include "policies/planners/planner.h"
#include "policies/pool/planned_arena.h"

namespace dlsim {

class PlannedPool : public PoolPolicy {
 public:
  // Planned offsets are multiples of this: the alignment cudaMalloc guarantees (256 bytes, CUDA C++ Programming
  // Guide), which every cuDNN and cuBLAS kernel accepts. Packing at byte granularity, as SINGA's SmartMemPool
  // does (smartpool keeps that), gives offsets that cuDNN 9 rejects on a real H100
  // (CUDNN_STATUS_BAD_PARAM_MISALIGNED_POINTER: validate/, results/validation/).
  static constexpr uint64_t kPlanAlignment = 256;

  PlannedPool(DeviceMemory& device, std::unique_ptr<Planner> planner);

  std::string name() const override { return "planned"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;
  void iteration_end(int iteration) override;
  const PoolStats& stats() const override { return arena_.stats(); }
  nlohmann::json report() const override;
  bool holds_frees_for_other_streams() const override { return false; }  // a planned slot is reused, not held

 private:
  void make_plan();

  std::unique_ptr<Planner> planner_;
  PlannedArena arena_;
  struct Op {
    bool is_malloc;
    DevPtr ptr;
    uint64_t size;
  };
  std::vector<Op> profile_;  // the first iteration's ops, until planned
  bool profiling_ = true;
  struct Slot {
    uint64_t size, extent, offset;
  };
  std::vector<Slot> slots_;  // planned buffers in Malloc order
  size_t cursor_ = 0;
  bool reservation_failed_ = false;
  uint64_t load_ = 0, height_ = 0, lower_bound_ = 0, nodes_ = 0, persistent_ = 0, profile_mallocs_ = 0;
  bool proved_optimal_ = false;
  uint64_t fallbacks_before_plan_ = 0;
};

void register_planned(PoolRegistry& r);

}  // namespace dlsim
