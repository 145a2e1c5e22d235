#pragma once
// A collective's op as the graph holds it, below the hardware library: what hw/collective_op.h's add_collective
// inserts, and what the builders (tensor parallel, workloads/tensor_parallel.h) and the training synthesis (the
// backward of a tensor-parallel collective) insert themselves, as they cannot call into hw/. The bus factor lives
// here so that the HBM traffic a collective is charged and the bus bandwidth hw/collective_model.h reports agree.
#include <cstdint>
#include <string>

#include "workloads/graph.h"

namespace dlsim {

// nccl-tests' bus factor for `ranks` ranks: 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1
// for broadcast: the bytes that cross each rank's link per byte of the message S. std::logic_error for a kind that
// is not a collective.
double collective_bus_factor(OpKind kind, int64_t ranks);

// An op of collective kind `kind` with its attributes (message_bytes, ranks, ranks_per_node, algorithm: 0 ring, 1
// tree, 2 auto; comm_stream) and its HBM traffic, bytes_read = bytes_written = ceil(bus factor x S): a ring sends
// and receives that much through every rank's memory. Inputs and outputs are the caller's; nothing is checked
// (hw/collective_op.h's add_collective checks what a hand-written one may get wrong).
Op collective_graph_op(const std::string& name, OpKind kind, uint64_t message_bytes, int64_t ranks,
                       int64_t ranks_per_node, int64_t algorithm, int64_t stream_tag, Phase phase);

}  // namespace dlsim
