// The built-in planners, in the order `dlsim list` shows them.
#include "policies/planners/greedy_planners.h"
#include "policies/planners/optimal_planner.h"

namespace dlsim {

const PlannerRegistry& planner_registry() {
  static const PlannerRegistry reg = [] {
    PlannerRegistry r("planner");
    register_greedy_planners(r);
    register_optimal_planner(r);
    return r;
  }();
  return reg;
}

}  // namespace dlsim
