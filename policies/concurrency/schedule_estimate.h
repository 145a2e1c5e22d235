#pragma once
// A fast estimate of a schedule's iteration time, for policies that compare many candidates (ios's stages,
// algorithm-aware's kernel choices) where running the executor for each would be too slow. It follows the
// rules sim/executor.h states for kernels, without memory or copies:
// - the host issues the ops in schedule order, paying launch_overhead_ns for each;
// - each stream runs its ops in issue order; an op also waits for every DAG predecessor (the events);
// - running kernels share the SMs max-min fairly by their sm_fraction (sim/fluid_share.h's rule, re-implemented
//   here: policies do not link the simulator), a kernel granted a of its demand d progressing at rate a / d.
// Allocation costs are left out, so the estimate is a bound from below on what a pool adds.
#include <vector>

#include "policies/concurrency/concurrency_policy.h"
#include "policies/concurrency/op_dag.h"

namespace dlsim {

struct EstimateInput {
  const OpDag& dag;
  std::vector<TimeNs> duration;  // per OpId, of the kernel each op runs
  std::vector<double> demand;    // per OpId, its SM share in (0, 1]
  TimeNs launch_overhead_ns = 0;
};

// The time from the first issue to the last kernel's end of the ops in `order` (any subset of the ops, in a
// topological order; predecessors outside it count as done at time 0), each on stream_of[op].
TimeNs estimate_ops(const EstimateInput& in, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                    int num_streams);

// The same for a whole schedule, its chosen kernel variants included (`variants` per op: KernelCostModel::variants
// of every op, read where the schedule picks variant_of != 0).
TimeNs estimate_schedule(const Graph& g, const OpDag& dag, const KernelCostModel& cost, const Schedule& s,
                         TimeNs launch_overhead_ns);

// Max-min fair rates of kernels with these demands sharing one GPU (rate = granted share / demand).
void fair_rates(const std::vector<double>& demands, std::vector<double>& rates);

}  // namespace dlsim
