#include "experiment/swap_evaluator.h"


#include "experiment/experiment_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "program/lower.h"

namespace dlsim {

PlanEvaluation SimulatedPlanEvaluator::evaluate(const std::vector<OpId>& order, const SwapPlan& plan) {
  ++n_;
  Schedule s = s_;
  if (!order.empty()) s.order = order;
  const Program p = lower(g_, s, plan);
  VirtualDeviceMemory dev(kUnlimitedDeviceBytes);
  auto pool = make_pool(e_, dev);
  SimContext ctx{g_, hw_.spec, *hw_.kernels, *hw_.link, *pool, dev};
  SimOptions opt;
  opt.iterations = 2;
  opt.record_trace = false;
  const RunResult r = simulate(p, ctx, opt);
  return {r.steady_iteration_ns, r.peak_live_bytes};
}

}  // namespace dlsim
