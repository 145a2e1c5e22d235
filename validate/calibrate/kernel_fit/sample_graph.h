#pragma once
// A sweep record as a one-op graph, built as the training synthesis builds that op (kind, attributes, tensors,
// FLOPs, bytes): what dlsim's cost models price, so that the cross-validation compares the simulator's own
// pricing of the op (the roofline before, the fitted model after) with the measured time.
#include "validate/calibrate/kernel_fit/kernel_sweep.h"
#include "workloads/graph.h"

namespace dlsim {

// The graph's last op is the record's kernel; for sdpa_fwd_bwd it is the FlashAttentionBwd (its forward first).
Graph sample_graph(const SweepRecord& r);

}  // namespace dlsim
