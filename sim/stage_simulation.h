#pragma once
// The simulated latency of one concurrent stage, for schedulers that compare many candidate stages (ios): the
// stage's groups on streams of their own on an idle GPU, the host issuing their kernels round-robin across the
// groups (one launch_overhead_ns each), the device model of sim/device_model.h running them (block dispatch,
// tail-only overlap of full-GPU kernels, shared HBM bandwidth, hardware queues). Memory, copies and events are
// left out: the ops of a stage are independent across groups and their predecessors outside it are done.
// This is the simulator's own answer to "how long does this stage take", where schedule_estimate.h is a fluid
// re-implementation that policies can use without linking the simulator.
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "workloads/graph.h"

namespace dlsim {

// From the first issue to the end of the last kernel, or to the end of the host's issuing when that is later
// (launches x launch_overhead_ns). The first launch reaches the GPU at 0 (the host issued it while the previous
// stage ran), each next one launch_overhead_ns later. Each group is a chain of ops run in order on its own stream
// (group j on stream j); at most kMaxStageGroups groups.
TimeNs simulate_stage(const Graph& g, const GpuSpec& gpu, const KernelCostModel& kernels, const TransferModel& link,
                      const std::vector<std::vector<OpId>>& groups, TimeNs launch_overhead_ns);

inline constexpr size_t kMaxStageGroups = 64;

}  // namespace dlsim
