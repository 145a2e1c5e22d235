#pragma once
// A lower bound on the iteration time of any swap plan that keeps the load under a limit, printed beside
// every plan so that each policy's distance from the best possible is known, for plans in dlsim's plan language
// (absences between two uses of a tensor within one iteration). A relaxation: bytes are divisible, any tensor
// between two of its uses may be off the device, copies cost no latency, and ops keep their profiled durations
// (swapping never makes compute faster).
//
// With E(i) = load(i) - limit the excess during the op at position i (profiled start s(i), end e(i),
// iteration T), any plan must hold E(i) bytes on the host during that op, so:
//   - reachable only if what cannot leave during op i (its own tensors, the workspace, and tensors before
//     their first or after their last use, such as optimizer state) fits the limit, for every i;
//   - the copy-out link moves every byte off the device at least once per iteration and so does the
//     copy-in link: T' >= max_i E(i) / bandwidth, for each direction;
//   - bytes of tensors made in this iteration (the excess beyond what persistent tensors could cover) must
//     have left after the iteration started and come back before it ends: with S the total stall,
//     E_t(i) <= bw_out * (s(i) + S) and E_t(i) <= bw_in * (T - e(i) + S).
// The bound is T + the least S that satisfies all of these.
#include <cstdint>
#include <vector>

#include "hw/cost_model.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct SwapLowerBound {
  bool reachable = true;
  uint64_t least_reachable_bytes = 0;  // max over ops of what cannot leave during the op: no plan goes below it
  TimeNs iteration_ns = 0;             // the bound (when reachable)
};

SwapLowerBound swap_lower_bound(const Graph& g, const ProgramLoad& load, const IterationProfile& profile,
                                const TransferModel& link, uint64_t limit);

}  // namespace dlsim
