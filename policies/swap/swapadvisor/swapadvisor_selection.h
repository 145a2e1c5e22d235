#pragma once
// SwapAdvisor's swap planner (Huang, Jin, Li, ASPLOS'20; notes allocators-and-swap.md B3): given an op order
// and a split of device memory into fixed-size slots per size class, which tensors go out and when they come
// back. Walking the order: a tensor an op needs takes a free slot of its class; with none free, the resident
// tensor of that class whose next use is furthest away is evicted (Belady's rule; it is copied out after its
// last use and freed just before the op); after each op, freed slots are filled at once with the evicted
// tensors of their class whose next use is nearest (early swap-in, "as soon as memory allows").
// Here: "managed" tensors (at least min_bytes, not workspaces) live in slots; the rest (small tensors,
// workspaces) must fit in what the slots leave of the limit at every op. A tensor prefetched and not yet used
// is not evicted again (an absence is one interval between two uses in the plan language), and a persistent
// tensor with no later use in the iteration, or none yet, stays (swaps do not cross iterations). The paper's details
// beyond the abstract are recalled, not read (notes B3): the class split below is ours.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

// Size classes over the managed tensors: at most `max_classes` groups of the sorted distinct sizes, each
// group's slot as large as its largest tensor.
struct SizeClasses {
  std::vector<uint64_t> slot_bytes;  // per class
  std::vector<int> class_of;         // per tensor, -1: not managed
  std::vector<int> persistent;       // per class: persistent tensors (resident when the iteration starts)
  std::vector<int> peak_resident;    // per class: most tensors of the class live at once without swapping
  std::vector<int> least_slots;      // per class: what one op needs at once, and at least the persistent tensors
  uint64_t unmanaged_peak = 0;       // most bytes of unmanaged tensors live at once
};
SizeClasses size_classes(const Graph& g, const ProgramLoad& load, uint64_t min_bytes, int max_classes);

// The plan for `order` with `slots[c]` slots per class; feasible = false when some op needs more slots of a
// class than there are, or the slots and the unmanaged tensors exceed the limit.
struct SlotPlan {
  bool feasible = false;
  std::string why;  // when not feasible
  SwapPlan plan;
};
SlotPlan plan_with_slots(const Graph& g, const std::vector<OpId>& order, const SizeClasses& sc,
                         const std::vector<int>& slots, uint64_t limit);

}  // namespace dlsim
