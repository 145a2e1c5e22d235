#pragma once
// The simulator in a swap policy's loop: lowers a plan and simulates it with the experiment's pool on a
// device with no memory limit, two iterations (the second is the steady state), no trace.
#include "experiment/experiment.h"
#include "hw/hardware.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

class SimulatedPlanEvaluator : public PlanEvaluator {
 public:
  SimulatedPlanEvaluator(const Experiment& e, const Graph& g, const Schedule& s, const Hardware& hw)
      : e_(e), g_(g), s_(s), hw_(hw) {}
  PlanEvaluation evaluate(const std::vector<OpId>& order, const SwapPlan& plan) override;
  int evaluations() const override { return n_; }

 private:
  const Experiment& e_;
  const Graph& g_;
  const Schedule& s_;
  const Hardware& hw_;
  int n_ = 0;
};

}  // namespace dlsim
