#pragma once
// A simulated run's allocation history as PyTorch 2's memory snapshot (torch.cuda.memory._snapshot()): a dict
// with `segments` (the device memory the pool holds at the snapshot, each with its blocks) and `device_traces`
// (one list per device of alloc / free_requested / free_completed / segment_alloc / segment_free /
// segment_map / segment_unmap entries), pickled, so that pytorch.org/memory_viz and torch.cuda._memory_viz open
// it. What dlsim puts where (docs/figures.md "Memory snapshots" says the same):
// - The snapshot is taken where a training script takes it: after the last iteration, before teardown frees the
//   weights; the trace covers setup and every iteration up to there.
// - A segment is one cudaMalloc of the pool (or a contiguous run of pages mapped into an expandable range),
//   whatever the pool: cnmem's one big reservation is one segment, cuda-malloc's every tensor its own. dlsim's
//   pools do not expose their free lists, so a segment's blocks are its live tensors at their addresses
//   (active_allocated; active_pending_free while a free waits for another stream) and the gaps between them
//   (inactive), which is what adds up to total_size.
// - Sizes are the tensor bytes the program allocates (what dlsim counts as live), so the trace's live bytes
//   peak at `dlsim run`'s peak live; a pool's rounding shows only as the gaps.
// - Each entry's `frames` is one frame naming the tensor: name = the tensor's name, filename = its kind (weight,
//   activation, gradient, optimizer_state, workspace, input), line = the iteration (-1: setup). time_us is the
//   simulated time.
#include <nlohmann/json.hpp>

#include <string>

#include "experiment/snapshot/allocation_recorder.h"
#include "experiment/run_experiment.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

// `iterations`: the run's requested iterations (records of iteration >= it are teardown, left out).
nlohmann::json memory_snapshot(const Trace& trace, const Graph& graph, const AllocationLog& log, int iterations);
// The snapshot of a run made with artifacts, pickled to `path` (a ConfigError naming it when it cannot be written).
void write_memory_snapshot(const std::string& path, const RunArtifacts& artifacts, int iterations);

}  // namespace dlsim
