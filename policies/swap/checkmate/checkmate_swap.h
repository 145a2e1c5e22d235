#pragma once
// `checkmate`: the optimal recomputation plan for a memory budget (Jain et al., MLSys 2020): Checkmate's MILP
// (checkmate_milp.h) over the issue order, solved by CBC (cbc_solver.h) with a time limit, the gap reported;
// or, with `solve: lp-rounding`, the paper's deterministic LP rounding (checkmate_rounding.h). The budget is taken
// as by every budget-driven policy (memory_limit.h).
// The MILP grows with the square of its nodes: a graph above `max_ops` ops (VGG-16's 127 are solved as they are) is
// solved on a coarse graph of at most `coarse_nodes` nodes (contiguous segments of the issue order,
// remat_coarsening.h) and the coarse plan lowered back to the ops (checkmate_coarse.h), or with `coarsen: never`
// refused with an error naming the parameter.
// With `swap: true` the MILP may also copy a value to the host and back (checkmate_milp.h says how copies are
// timed); the plan then mixes drops, re-runs and copies. Only the exact MILP on an op-level graph solves it (not
// `lp-rounding`, not a coarse graph).
// With `compare_baselines` (the default) the plan is set beside dtr's, capuchin's and checkpoint's at the same budget
// (checkmate_baselines.h): the run never gets a worse plan than theirs.
#include <string>
#include <vector>

#include "policies/swap/checkmate/checkmate_options.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

class CheckmateSwap : public SwapPolicy {
 public:
  explicit CheckmateSwap(CheckmateOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  CheckmateOptions o_;
  SwapResult plan_exact(const SwapContext& ctx, uint64_t budget, const std::vector<double>& op_ns) const;
};

}  // namespace dlsim
