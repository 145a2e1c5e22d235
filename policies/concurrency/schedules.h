#pragma once
// The schedule builders behind the registered concurrency policies (builtin_concurrency.cc), callable on their
// own for tests and benchmarks. Each returns a Schedule whose order is a topological order of Graph::dag() and
// whose streams are compacted (compact_streams), so a graph with nothing to overlap gets the serial schedule.
#include "policies/concurrency/concurrency_policy.h"
#include "policies/concurrency/op_dag.h"

namespace dlsim {

// branch-streams (branch_streams.cc): graph order; an op continues the stream of a predecessor that is still
// that stream's last op (the first such, by id), else it opens a branch on the least recently used of
// max_streams streams. Every branch of a fork-join region (an Inception module, a residual block, dgrad next
// to wgrad) gets its own stream, as Caffe's and TensorFlow's multi-stream modes and the SPAA paper's case study.
Schedule branch_streams_schedule(const Graph& g, const OpDag& dag, int max_streams);

// critical-path (critical_path_schedule.cc): list scheduling. Ready ops are taken by longest remaining path
// (bottom level with standalone kernel times) and put on the stream of max_streams that can start them first
// (a predecessor's stream on a tie), each stream treated as a processor that runs its kernel at standalone
// speed; the issue order is the order ops are taken.
Schedule critical_path_schedule(const Graph& g, const OpDag& dag, const OpCosts& costs, int max_streams);

struct IosOptions {
  int max_streams = 8;
  int max_group_size = 3;  // r: ops in one group (a chain run in order on one stream)
  int max_num_groups = 3;  // s: groups in one stage
  int max_part_ops = 16;   // the DP's unit: a block of at most this many ops (IOS: max_part_size)
  TimeNs launch_overhead_ns = 0;
  // A bound on the dynamic program's work: the size of every candidate stage it looks at, remembered or not (its
  // units plus one per group: the length of its memo key), plus the ops of every stage it estimates. With r, s and max_part_ops near their maxima the DP grows
  // exponentially (minutes on a 100-layer graph): past this ios stops with ScheduleLimitError, which names the
  // parameters to lower or this one to raise.
  uint64_t max_work = 100'000'000;
  // The latency of a candidate stage (its groups' ops, each group in order); empty: the fluid estimate.
  // simulate_stages (the `stage_costs: simulator` parameter) asks the policy to take ScheduleContext's.
  std::function<TimeNs(const std::vector<std::vector<OpId>>&)> stage_time;
  bool simulate_stages = true;
};
struct IosStats {
  size_t parts = 0, states = 0, stage_estimates = 0;  // stage_estimates: stages priced (simulated or estimated)
  uint64_t work = 0;  // what IosOptions::max_work bounds
  TimeNs estimated_ns = 0;  // the DP's sum of stage costs
};
// ios (ios_schedule.cc): IOS's dynamic program (Ding et al., MLSys'21) over the training graph.
Schedule ios_schedule(const Graph& g, const OpDag& dag, const OpCosts& costs, const IosOptions& o,
                      IosStats* stats = nullptr);

// dgrad-wgrad (training_overlaps.cc): every weight-gradient kernel (Conv2dBwdFilter, LinearBwdWeight) of `base`
// moves to one side stream, so it runs beside its backward-data twin (MXNet PR #14006). No-op with one stream.
// Only ops that something issued after them could run beside move (on a chain none does).
void split_dgrad_wgrad(const Graph& g, const OpDag& dag, Schedule& s, int max_streams);
// optimizer-overlap (training_overlaps.cc): every optimizer op moves to one side stream and is issued right after
// the last op it depends on (its gradient's producer), so updates run while the backward pass goes on.
void overlap_optimizer(const Graph& g, const OpDag& dag, Schedule& s, int max_streams);

// algorithm-aware (algorithm_aware.cc): greedily gives each convolution the kernel variant
// (KernelCostModel::variants) that lowers the estimated iteration time of `s` (schedule_estimate.h), in issue
// order; keeps variant 0 where nothing wins. Fills s.variant_of and s.variant_workspace_bytes.
void choose_kernel_variants(const Graph& g, const OpDag& dag, const KernelCostModel& cost, Schedule& s,
                            TimeNs launch_overhead_ns);

}  // namespace dlsim
