#pragma once
// `planned`: profile the first iteration, then serve every later iteration from an offline placement made by
// any registered planner (policies/planners), in one reservation.
//
// - Until the first iteration_end(), every request is a cudaMalloc and is recorded (size, pointer, order).
// - The profile is the iteration's own: from iteration_begin(0) (from the first request when no executor says
//   where setup ends) to iteration_end(0). Each Malloc in it is a residency: a tensor swapped out and back in,
//   or dropped and recomputed, is two Mallocs, each with its own lifetime, and the plan is learnt from the
//   iteration that runs the swap plan, so each residency gets its own slot for exactly its own time.
// - At iteration_end(0) the residencies allocated and freed inside that iteration become a planning instance:
//   buffer k = the k-th such Malloc, live over [its op index, its Free's op index). The others keep cudaMalloc
//   memory and are not planned: blocks still live at the boundary (parameters and optimizer state from setup;
//   a swapped weight brought back in the backward pass and kept until the next iteration's swap-out) and setup
//   blocks freed inside the iteration (that weight's first residency, which no later iteration allocates).
// - In later iterations the n-th Malloc of the iteration is matched with the profile's n-th Malloc, planned or
//   not: a planned one whose size equals the request's takes its slot (if the slot's bytes are free); anything
//   else (a residency that crosses the boundary, a size that differs) falls back to cudaMalloc (counted). The
//   position restarts at each iteration_begin() and iteration_end(). Matching by position, not by the next
//   planned size, keeps one unplanned request from taking a planned slot of the same size and shifting every
//   later one out of its slot. A caller that never calls iteration_begin() gets the profile from the first
//   request and the match by size: a request takes the next planned slot if it has that slot's size.
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
  void iteration_begin(int iteration) override;
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
  std::vector<Op> profile_;   // setup's and the first iteration's ops, until planned
  size_t profile_begin_ = 0;  // index in profile_ of the first iteration's first op
  bool told_iteration_begin_ = false;
  bool profiling_ = true;
  struct Slot {
    uint64_t size, extent, offset;
  };
  std::vector<Slot> slots_;        // planned buffers in Malloc order
  std::vector<int64_t> slot_at_;   // per Malloc of the profiled iteration: its index in slots_, or -1 (unplanned)
  size_t position_ = 0;            // Mallocs served so far in this iteration (without iteration_begin: the next
                                   // planned slot)
  bool reservation_failed_ = false;
  uint64_t load_ = 0, height_ = 0, lower_bound_ = 0, nodes_ = 0, persistent_ = 0, profile_mallocs_ = 0;
  uint64_t crossing_ = 0, setup_freed_ = 0;
  bool proved_optimal_ = false;
  uint64_t fallbacks_before_plan_ = 0;
};

void register_planned(PoolRegistry& r);

}  // namespace dlsim
