#pragma once
// The rank-local graph of each layout (parallel/rank_local_graph.h), one file each: ddp_graph.cc,
// fsdp_graph.cc, zero_graph.cc. Each takes the training graph of more than one rank.
#include "parallel/internal/trained_parameters.h"

namespace dlsim::parallel::internal {

RankLocalGraph ddp_graph(const Graph& training, const ParallelLayout& layout);
RankLocalGraph fsdp_graph(const Graph& training, const ParallelLayout& layout);
RankLocalGraph zero_graph(const Graph& training, const ParallelLayout& layout);

// DDP's buckets after its rebuild (model_state_sharding.h), over the parameters in gradient-ready order.
std::vector<DdpBucket> ddp_buckets(const std::vector<TrainedParameter>& params, const ParallelLayout& layout);
// The op at which a bucket's last gradient is ready (its all-reduce or reduce-scatter is issued after it).
OpId bucket_ready_op(const std::vector<TrainedParameter>& params, const DdpBucket& b);

}  // namespace dlsim::parallel::internal
