#pragma once
// Where lowering runs collectives: each collective op (is_collective) on a communication stream of its own, as
// PyTorch's ProcessGroupNCCL runs NCCL kernels on a stream per process group, whatever compute stream the
// concurrency policy chose for it. The op's comm_stream attribute is a tag: collectives of one tag share a stream,
// the tags present get streams num_streams, num_streams + 1, ... in increasing tag order, after the compute streams
// and before lowering's copy and host streams (program/lower.h). The events between them and the compute streams
// are lowering's usual cross-stream events: the collective waits for the writers of its inputs, the readers of its
// outputs wait for it, and a tensor it used is freed after a record_stream of its stream.
#include "policies/concurrency/concurrency_policy.h"
#include "workloads/graph.h"

namespace dlsim {

// Whether the graph holds a collective op.
bool has_collectives(const Graph& g);

// `s` with every collective moved to its communication stream and num_streams grown by the tags present; `s`
// itself when the graph has none, or when s.stream_of does not cover the graph (lowering reports that).
Schedule with_comm_streams(const Graph& g, const Schedule& s);

}  // namespace dlsim
