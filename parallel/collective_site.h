#pragma once
// Where a data-parallel layout's collectives go in one rank's iteration: the hook the simulator's collective ops
// fill (issue 32 item 2). The rank-local graph (rank_local_graph.h) lists them and inserts no op for them: until
// collectives are device work their time is not modelled, and their buffers' lifetimes stand on the compute ops
// around them.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace dlsim::parallel {

enum class CollectiveKind : uint8_t { AllReduce, AllGather, ReduceScatter };
const char* to_string(CollectiveKind k);  // "all_reduce", "all_gather", "reduce_scatter"

struct CollectiveSite {
  CollectiveKind kind = CollectiveKind::AllReduce;
  // Issued once this op has been issued (-1: at the start of the iteration), on the layout's communication
  // stream; the op `needed_by` waits for it (-1: the next iteration's first op).
  OpId issue_after = -1;
  OpId needed_by = -1;
  // S of docs/multi-gpu.md: the all-reduce buffer; the whole gathered array for all-gather and reduce-scatter.
  uint64_t bytes = 0;
  int64_t ranks = 1;
  std::string unit;               // the FSDP unit ("layers.0", "(root)") or the bucket ("ddp.bucket.0")
  std::vector<TensorId> tensors;  // what it fills or drains: a unit's gathered parameters, a bucket buffer
};

}  // namespace dlsim::parallel
