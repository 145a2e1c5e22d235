#pragma once
// An offline planner: given every buffer's lifetime and size up front, choose offsets in one arena.
// Planners are registered by name (planner_registry) so that the `plan` command, the `planned` pool and the
// tests can pick one from text, with typed parameters.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/registry.h"
#include "policies/planners/dsa_instance.h"

namespace dlsim {

// The longest time limit accepted (about 31 years): beyond it a steady_clock deadline in nanoseconds would
// overflow. The parameter's declared range names it, so 1e10 or inf is an error, not a wrapped deadline.
inline constexpr double kMaxPlannerTimeLimitS = 1e9;  // messages write it as 1e9

struct PlanResult {
  std::vector<uint64_t> offsets;  // one per input buffer, in input order
  uint64_t height = 0;            // max(offset + size)
  uint64_t lower_bound = 0;       // the best proven lower bound on the optimal height (at least LOAD)
  bool optimal = false;           // height == lower_bound, or the search proved no lower height fits
  uint64_t nodes = 0;             // search nodes explored (0 for one-pass heuristics)
  bool complete = true;           // false: a one-pass planner reached its time limit and stacked the rest on top
};

class Planner {
 public:
  virtual ~Planner() = default;
  virtual std::string name() const = 0;
  virtual PlanResult plan(const std::vector<DsaBuffer>& buffers) const = 0;
};

using PlannerRegistry = Registry<Planner>;
// greedy-by-size, best-fit, optimal (in that order).
const PlannerRegistry& planner_registry();

// Fills height, lower_bound (LOAD) and optimal (height == LOAD) of a heuristic's result.
void finish_heuristic_result(const std::vector<DsaBuffer>& buffers, PlanResult& r);

}  // namespace dlsim
