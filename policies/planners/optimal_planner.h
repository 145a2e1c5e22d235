#pragma once
// The `optimal` planner: proves a placement optimal, or returns the best one found and a proven lower bound
// when its limits run out.
//
// 1. LOAD (a sweep) is the first lower bound. The first placement is the best of best fit in five orders
//    (greedy-by-size's, two peak-first orders, XLA's spatial and temporal), each repaired by re-placing with
//    the buffers above LOAD moved first (peak_orders.h); this alone reaches or nearly reaches LOAD on the large
//    real instances, where the exact search cannot finish.
// 2. The instance is cut in time where no buffer crosses (independent parts: the height is their maximum).
// 3. Capacity probes (capacity_search.h, MiniMalloc's canonical search) on the parts whose current height exceeds the probe:
//    first at the lower bound (85 % of the remaining budget: where OPT = LOAD that probe is the whole job),
//    then a binary search between the proven bound and the best height. A probe that finds a placement lowers
//    the best height; one that exhausts the search proves every capacity up to it infeasible and raises the
//    bound; one that runs out of budget proves nothing.
// The time limit is hard: the heuristics, the conflict-graph build and the search all check the clock, and
// a little of it is kept back for cleaning up; when it runs out the best placement so far is returned.
// The result is optimal when the best height meets the proven bound.
#include <string>

#include "common/param_binding.h"
#include "policies/planners/capacity_search.h"
#include "policies/planners/planner.h"

namespace dlsim {

// The planner's options in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h).
struct OptimalOptions {
  double time_limit_s = 10.0;  // wall-clock budget for the whole plan, in (0, kMaxPlannerTimeLimitS]
  uint64_t node_limit = 0;     // total search nodes (0: none); with a node limit alone the result is deterministic
  Preorder preorder = Preorder::RoundRobin;

  static const ParamBindings<OptimalOptions>& parameters();
  bool operator==(const OptimalOptions&) const = default;
};

PlanResult plan_optimal(const std::vector<DsaBuffer>& buffers, const OptimalOptions& options);

void register_optimal_planner(PlannerRegistry& r);

}  // namespace dlsim
