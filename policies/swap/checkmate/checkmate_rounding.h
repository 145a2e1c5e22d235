#pragma once
// Checkmate's deterministic LP rounding (Jain et al. 2020, §5): keep what the relaxation keeps at least theta, then
// each stage re-runs exactly what its ops need that is not kept, recursively. Rounding at 1/2 can keep both halves of
// a split and miss the budget, so the thresholds from 1/2 up to keeping nothing that can be re-run are tried, and
// the cheapest plan within the budget wins (else the one of least peak).
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "policies/swap/checkmate/checkmate_milp.h"
#include "policies/swap/checkmate/remat_problem.h"

namespace dlsim {

struct RoundedPlan {
  RematSchedule schedule;
  SwapPlan plan;
  double threshold = 0;
  uint64_t peak_bytes = 0;
  bool fits = false;
};

// `lower` turns a schedule into the plan the run executes and gives its peak of live bytes.
RoundedPlan round_relaxation_best(const RematProblem& p, const std::map<std::string, double>& lp, uint64_t budget,
                                  const std::function<std::pair<SwapPlan, uint64_t>(const RematSchedule&)>& lower);

// The re-run time of a schedule (ns), by the problem's op times.
double rerun_ns(const RematProblem& p, const RematSchedule& s);

}  // namespace dlsim
