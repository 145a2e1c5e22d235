#pragma once
// Checkmate on a coarse graph (remat_coarsening.h): the MILP of the coarse graph solved by CBC (or its LP rounded),
// the coarse plan lowered to the ops, and the lowered plan's load (ProgramLoad: what the simulator counts) checked
// against the budget. The coarse count is conservative, but the lowering keeps what a replay reads until the op
// it serves and frees a replay's temporaries after their last replayed reader, which a segment-level count does not
// see exactly: a lowered plan above the budget is solved again with the coarse budget lowered by the excess (at
// most three more times, within the time limit), and when none fits the plan of least peak is kept and the report
// says it missed (`fits: false` per attempt).
// The gap reported is CBC's on the coarse MILP: its lower bound is the least re-run time of any plan that re-runs
// whole segments and keeps or drops a segment's values together, counted per segment (`lower_bound_on`); it bounds
// no op-level plan, which can re-run part of a segment.
// Determinism: CBC runs single-threaded, and `solver_nodes` stops it after a number of nodes that is the same on
// every machine; a solve stopped by `time_limit_s` instead is reported (`deterministic: false`).
#include <vector>

#include "policies/swap/checkmate/checkmate_options.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

// `op_ns` by position; `budget` in bytes of live tensors.
SwapResult plan_coarse(const SwapContext& ctx, const CheckmateOptions& o, uint64_t budget,
                       const std::vector<double>& op_ns);

}  // namespace dlsim
