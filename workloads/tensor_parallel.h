#pragma once
// Tensor parallelism as Megatron-LM builds it (Shoeybi et al., "Megatron-LM", 2019, section 3): each rank's graph
// of a transformer layer whose attention and MLP are split over `tp` GPUs. The projections that read the layer's
// input (q/k/v, gate/up) are column-parallel: each rank holds output features / tp (heads / tp, kv-heads / tp) and
// computes its part of the output from the whole input. The projections that follow (o_proj, down_proj) are
// row-parallel: each rank holds input features / tp and computes a partial sum of the whole output, which an
// all-reduce completes. Megatron's two conjugate operators:
//   f (before a column-parallel block): identity in forward, all-reduce of the input's gradient in backward;
//   g (after a row-parallel block):     all-reduce in forward, identity in backward.
// g is a forward AllReduce op, in place on the partial output; the training synthesis passes the gradient through
// it (training_backward.cc). f is a view of the input (a Reshape to the same shape) with attribute
// grad_all_reduce = tp: the synthesis elides the view like any other and all-reduces the input's gradient once it
// is complete, before the op that produced the input runs its backward (training.cc).
// With sequence parallelism (Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models",
// 2022) the residual stream, its norms and adds hold S / tp tokens a rank; f becomes an all-gather of the sequence
// (a reduce-scatter of the gradient in backward) and g a reduce-scatter (an all-gather in backward).
//
// The collectives go over the tp ranks of one node (TP needs NVLink's bandwidth: Megatron keeps its group within a
// node), on communication stream kTensorParallelStreamTag; a tp larger than the hardware file's GPUs per node is the
// collective's pricing error naming node.gpus_per_node unless ModelOptions::tp_across_nodes lets the group span
// nodes.
#include <cstdint>
#include <string>

#include "workloads/graph.h"
#include "workloads/model_builder.h"
#include "workloads/model_options.h"

namespace dlsim {

// The communication stream tensor-parallel collectives share (hw/collective_op.h's stream tags): the tp process
// group's NCCL stream, apart from the data-parallel layouts' (tag 0, and FSDP's reduce-scatter stream, tag 1,
// parallel/collective_site.h), so that a critical-path all-reduce never queues behind FSDP's reduce-scatter.
inline constexpr int kTensorParallelStreamTag = 2;
// The largest tensor-parallel degree accepted: far above any node's GPUs (8 to 72 NVLink-connected GPUs today).
inline constexpr int64_t kMaxTensorParallel = 1024;

// Throws ConfigError naming `model` and tp for a degree outside [1, kMaxTensorParallel]. sequence_parallel at tp 1
// changes nothing (Megatron-LM turns it off there).
void check_tensor_parallel(const ModelOptions& opts, const std::string& model);

// `size` split over opts.tp ranks: a ConfigError naming `model` and `field` (the config's key) when tp does not
// divide it.
int64_t tp_shard(const ModelOptions& opts, int64_t size, const std::string& field, const std::string& model);

// Megatron's f on x: at tp 1, x itself (the plain graph); else a view of x marked for the all-reduce of its
// gradient in backward; with sequence parallelism the all-gather of x's S / tp tokens (axis 1) into the whole
// sequence, whose backward is the reduce-scatter of the gradient.
TensorId tp_enter(ModelBuilder& b, TensorId x, const ModelOptions& opts, const std::string& name);
// Megatron's g on a row-parallel layer's partial output y: at tp 1, y itself; else a forward all-reduce of y in
// place (its bytes are y's), which the synthesis passes the gradient through; with sequence parallelism the
// reduce-scatter of y onto S / tp tokens a rank (a ConfigError naming seq_len when tp does not divide S), whose
// backward is the all-gather of the gradient.
TensorId tp_exit(ModelBuilder& b, TensorId y, const ModelOptions& opts, const std::string& name);

// Megatron's vocabulary-parallel embedding and head: the rows of the embedding table (and of an untied lm_head)
// one rank holds. At tp 1 the vocabulary itself; else the vocabulary padded, as Megatron pads it
// (--make-vocab-size-divisible-by 128), to a multiple of 128 x tp, over tp.
int64_t tp_vocab_shard(const ModelOptions& opts, int64_t vocab);
// Megatron's vocab-parallel cross entropy (_VocabParallelCrossEntropy) on logits split over the vocabulary: the
// per-row maximum, target logit and sum of exponentials of each rank's shard, all-reduced in turn (three
// all-reduces of one fp32 per row) before the loss. Returns the last one's output, which the loss op must read
// (kNoTensor at tp 1). Their backward is the identity: the loss's gradient is local to each shard.
TensorId tp_vocab_parallel_loss_stats(ModelBuilder& b, TensorId logits, const ModelOptions& opts,
                                      const std::string& name);

// The ranks on one node of a tensor-parallel collective: tp, or 0 (as many as fit) with tp_across_nodes.
int64_t tp_ranks_per_node(const ModelOptions& opts);

}  // namespace dlsim
