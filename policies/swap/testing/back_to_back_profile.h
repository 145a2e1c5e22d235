#pragma once
// A profile for the swap policies' tests: the ops of `s` at the given times laid back to back, with the no-swap
// peak of that order, so that a test can state every start and end by hand.
#include <vector>

#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim::testing {

inline IterationProfile profile_of(const Graph& g, const Schedule& s, const std::vector<TimeNs>& ns) {
  IterationProfile p;
  p.order = s.order;
  TimeNs t = 0;
  for (TimeNs d : ns) {
    p.op_start.push_back(t);
    t += d;
    p.op_end.push_back(t);
  }
  p.iteration_ns = t;
  p.peak_live_bytes = ProgramLoad(g, s.order).peak();
  return p;
}

}  // namespace dlsim::testing
