#include "hw/kernel_variants.h"
#include "policies/concurrency/schedule_estimate.h"
#include "policies/concurrency/schedules.h"

namespace dlsim {

// One pass over the convolutions in issue order, each trying its variants against the estimate of the whole
// schedule with the choices made so far (a greedy descent: a kernel's best variant depends on what runs beside
// it, which the estimate's fluid sharing captures). On one stream nothing runs beside anything, so the
// default kernel, fastest alone, is kept: the pass is skipped.
void choose_kernel_variants(const Graph& g, const OpDag& dag, const KernelCostModel& cost, Schedule& s,
                            TimeNs launch_overhead_ns) {
  const size_t n = g.ops().size();
  s.variant_of.assign(n, 0);
  s.variant_workspace_bytes.assign(n, 0);
  if (s.num_streams < 2) {
    s.variant_of.clear();
    s.variant_workspace_bytes.clear();
    return;
  }
  OpCosts c = op_costs(g, cost);
  EstimateInput in{dag, c.duration, c.demand, launch_overhead_ns};
  TimeNs best = estimate_ops(in, s.order, s.stream_of, s.num_streams);
  bool changed = false;
  for (OpId o : s.order) {
    const Op& op = g.op(o);
    if (!has_kernel_variants(op.kind)) continue;
    const std::vector<KernelVariant> vs = cost.variants(g, op);
    const auto i = static_cast<size_t>(o);
    size_t pick = 0;
    for (size_t v = 1; v < vs.size(); ++v) {
      in.duration[i] = vs[v].cost.duration_ns;
      in.demand[i] = vs[v].cost.sm_fraction;
      const TimeNs t = estimate_ops(in, s.order, s.stream_of, s.num_streams);
      if (t < best) best = t, pick = v;
    }
    in.duration[i] = vs[pick].cost.duration_ns;
    in.demand[i] = vs[pick].cost.sm_fraction;
    s.variant_of[i] = static_cast<uint8_t>(pick);
    s.variant_workspace_bytes[i] = vs[pick].workspace_bytes;
    changed |= pick != 0;
  }
  if (!changed) {
    s.variant_of.clear();
    s.variant_workspace_bytes.clear();
  }
}

}  // namespace dlsim
