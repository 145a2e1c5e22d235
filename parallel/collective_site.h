#pragma once
// Where a data-parallel layout's collectives go in one rank's iteration, and on which stream: each layout
// (ddp_graph.cc, fsdp_graph.cc, zero_graph.cc) lists its sites, and rank_local_graph.h turns every site into a
// collective op of the graph (hw/collective_op.h: priced by the interconnect, run on its communication stream),
// so that its time, its overlap with compute and the lifetimes of the buffers it fills or drains are simulated.
#include <cstdint>
#include <string>
#include <vector>

#include "hw/collective_model.h"
#include "workloads/graph.h"

namespace dlsim::parallel {

// The communication streams the layouts use (CollectiveOp::stream_tag). DDP and ZeRO issue every collective on
// their process group's one NCCL stream; FSDP2 keeps all-gathers and reduce-scatters on two streams of their own
// (FSDPCommContext: all_gather_stream, reduce_scatter_stream), so a reduce-scatter never queues behind the next
// unit's all-gather.
inline constexpr int kProcessGroupStream = 0;
inline constexpr int kFsdpAllGatherStream = 0;
inline constexpr int kFsdpReduceScatterStream = 1;

struct CollectiveSite {
  CollectiveKind kind = CollectiveKind::AllReduce;
  // Issued (in the host's issue order) right after this op (-1: before the iteration's first op); sites after the
  // same op are issued in the order the layout listed them.
  OpId issue_after = -1;
  // The op that waits for it through the tensors it writes (-1: none in this iteration, the iteration's end
  // joins every stream). Documentation of what `outputs` makes the lowering do; the ids are the graph's.
  OpId needed_by = -1;
  // S of docs/multi-gpu.md (nccl-tests): the all-reduce buffer; the whole gathered array for all-gather and
  // reduce-scatter.
  uint64_t bytes = 0;
  int64_t ranks = 1;
  int64_t ranks_per_node = 0;  // CollectiveOp::ranks_per_node: ParallelLayout::ranks_per_node
  int stream_tag = kProcessGroupStream;
  Phase phase = Phase::Backward;
  std::string unit;  // the FSDP unit ("layers.0", "(root)"), the bucket ("ddp.bucket.0"), "parameters"
  // What it reads and writes (an all-reduce the same bucket in place): the ops that write its inputs come
  // before it, the ops that read its outputs wait for it on their streams, and lowering frees each after its
  // last use on whichever stream, as record_stream does.
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  OpId op = -1;  // the collective op rank_local_graph inserted for it
};

}  // namespace dlsim::parallel
