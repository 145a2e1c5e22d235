#pragma once
// `checkmate`: the optimal recomputation plan for a memory budget (Jain et al., MLSys 2020): Checkmate's MILP
// (checkmate_milp.h) over the issue order, solved by CBC (cbc_solver.h) with a time limit, the gap reported;
// or, with `solve: lp-rounding`, the paper's deterministic LP rounding (the relaxation solved, the keep matrix
// rounded at 1/2, each stage then re-runs exactly what its ops need that is not kept) for graphs too large to
// solve. The budget is taken as by every budget-driven policy (memory_limit.h). Graphs above `max_ops` ops are
// an error naming the parameter: the MILP grows with the square of the ops.
// With `swap: true` the MILP may also copy a value to the host and back (checkmate_milp.h says how copies are
// timed); the plan then mixes drops, re-runs and copies. Only the exact MILP solves it (not `lp-rounding`).
#include <string>
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/memory_limit.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct CheckmateOptions {
  MemoryLimit limit;
  double time_limit_s = 60;
  int max_ops = 400;
  bool lp_rounding = false;
  bool swap = false;
  std::string model_file;  // where to write the LP model too (empty: nowhere)

  static const ParamBindings<CheckmateOptions>& parameters();  // from_params refuses swap with lp_rounding
};

class CheckmateSwap : public SwapPolicy {
 public:
  explicit CheckmateSwap(CheckmateOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  CheckmateOptions o_;
};

}  // namespace dlsim
