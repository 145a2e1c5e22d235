#pragma once
// "Never worse than dtr, capuchin or checkpoint at the same budget" (issue 31): checkmate's plan is set beside the
// plans of dtr and capuchin at the same budget and of checkpoint (every 1 and every 2 blocks) and sqrt, and the run
// gets the best of them. Best: a plan within the budget (its load by ProgramLoad, what the simulator counts) before
// one above it; among plans within it the fastest iteration, among plans above it the least peak. Times come from
// the simulator in the loop (SwapContext::evaluator); without one (unit tests), from the profile: the no-swap
// iteration plus the re-run ops' times, so that plans that copy cannot be timed and are left out.
// Why compare rather than hand them to CBC as a start: on a coarse graph (remat_coarsening.h) dtr's evictions of
// single tensors and capuchin's copies are not plans of the coarse MILP, so they cannot seed it; set beside it
// after lowering, every plan is judged by the same count and the same simulator.
// The report gains `baselines` (each plan's policy, peak, whether it fits, iteration time), `checkmate_plan` (the
// same for checkmate's own) and, when a baseline wins, `baseline_chosen` with `baseline_reason`.
#include <cstdint>

#include "policies/swap/core/swap_policy.h"

namespace dlsim {

void keep_the_best_of_baselines(const SwapContext& ctx, uint64_t budget, SwapResult& checkmate);

}  // namespace dlsim
