#pragma once
// An experiment's swap plan and what it costs. The policy plans from a profile of the same experiment run
// without swapping (same graph, schedule and pool, on a device with no memory limit: the iteration time of
// a GPU with enough memory, which vDNN calls the oracle), with the simulator in the loop for policies that
// search (experiment/swap_evaluator.h). The run's figures are read off the lowered Program and the trace.
#include <nlohmann/json.hpp>

#include <cstdint>

#include "experiment/experiment.h"
#include "experiment/experiment_pool.h"
#include "hw/hardware.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct SwapPlanning {
  IterationProfile profile;      // the no-swap run (its iteration time is the overhead's baseline)
  SwapResult result;             // the policy's plan (result.order empty: the schedule's order)
  uint64_t planned_peak_bytes = 0;  // the load peak the plan gives (program order fixes it)
  // The swapping lower bound (swap_lower_bound.h) is for plans that only copy: a plan that recomputes trades
  // compute for memory instead, and no bound is given for it. (swap_figures' swap_bound_applies also asks that the
  // run kept to the target the bound is at.)
  bool bound_applies = true;
  bool bound_reachable = true;
  uint64_t least_reachable_bytes = 0;
  TimeNs lower_bound_ns = 0;     // swap_lower_bound.h at the target (or at the planned peak, for no target)
  int evaluations = 0;           // simulator runs the policy asked for
};

// The experiment run without swapping on a device with no memory limit: its last iteration's op times (from the
// end of the one before) and its iteration time and peak of live bytes.
IterationProfile profile_without_swaps(const Experiment& e, const Graph& g, const Schedule& s, const Hardware& hw);

// Profiles, plans and checks the plan's memory promise statically. `schedule` may gain the policy's order;
// `program` receives the plan lowered on it (the run's Program: the lowering rejects a plan that does not fit,
// naming the tensor, so the plan is lowered once, here).
SwapPlanning plan_swaps(const Experiment& e, const Graph& g, Schedule& schedule, const Hardware& hw, Program& program);

// The steady-state iteration's swap figures for `run --json`: bytes and copies per iteration, pinned host
// bytes, stall and overhead against the no-swap run, the target and whether the simulated peak met it,
// copy-engine busy fractions, the lower bound and the gap to it.
nlohmann::json swap_figures(const SwapPlanning& s, const Graph& g, const Program& p, const Trace& trace,
                            double iteration_time_us, uint64_t peak_live_bytes);

}  // namespace dlsim
