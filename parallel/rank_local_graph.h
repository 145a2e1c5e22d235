#pragma once
// One rank's training graph under a data-parallel layout (issue 32 item 1, memory side): the training graph with
// the persistent tensors at their per-rank sizes and the buffers the layout adds, each alive over the ops PyTorch
// keeps it over, so that the pools allocate them as they do any tensor (program/lower.h: a tensor is allocated
// before its first use and freed after its last).
//  - DDP: full replicas, and the reducer's bucket buffers: with gradient_as_bucket_view=False (the default) each
//    bucket is a flat tensor of its own (Reducer::initialize_buckets, at::empty), allocated at construction and
//    rebuilt in gradient-ready order after the first step; persistent, beside the gradients (ddp_graph.cc).
//  - FSDP2: sharded parameters, gradients and optimizer state (model_state_sharding.h's chunks, rank 0: the
//    fullest), each unit's gathered parameters alive over its forward and again over its backward, the unsharded
//    gradients until the unit's reduce-scatter and its input buffer there (fsdp_graph.cc).
//  - ZeRO-1: optimizer state sharded beside DDP's buckets; ZeRO-2: gradients too (zero_graph.cc).
// Each layout's collectives (collective_site.h) are then inserted as collective ops (hw/collective_op.h), each
// right after the op it follows, on the layout's communication streams; RankLocalGraph::collectives lists them in
// issue order with their ops' ids. One rank (dp: 1, fsdp: 1) is the training graph unchanged, with no collective.
#include "parallel/parallel_layout.h"
#include "parallel/rank_graph.h"

namespace dlsim::parallel {

// Throws ConfigError (key "parallel") when the graph has no optimizer step to shard, or a parameter's update op
// is not the synthesis's (workloads/training_optimizer.cc).
RankLocalGraph rank_local_graph(Graph training, const ParallelLayout& layout);

}  // namespace dlsim::parallel
