#pragma once
// What the rank-local graph's layouts share (parallel/rank_local_graph.h): the parameters the optimizer updates,
// read off the training graph, and the edits that move a tensor's lifetime without adding an op.
#include <vector>

#include "parallel/model_state_sharding.h"
#include "parallel/parallel_layout.h"
#include "parallel/rank_graph.h"

namespace dlsim::parallel::internal {

struct TrainedParameter {
  TensorId weight = kNoTensor;
  TensorId grad = kNoTensor;      // the gradient its update reads
  std::vector<TensorId> states;   // its optimizer state, in the update's order
  TensorId foreach_sqrt = kNoTensor;  // the foreach Adam's temporary its update reads (training_optimizer.cc)
  OpId update = -1;               // the optimizer op that updates it
  OpId first_forward_use = -1;    // the first forward op that reads it; -1: none
  int32_t block = -1;             // that op's Graph::blocks index; -1: none (the root's)
  OpId grad_ready = -1;           // the last backward op that writes its gradient
  ModelParameter model_parameter;  // name, shape and element size, for model_state_sharding
};

// Every parameter an optimizer op updates, in the order the training graph made them (registration order).
// An update op's inputs are, per parameter, the weight, its gradient and its state (training_optimizer.cc, one
// parameter per op or all in a fused one). Throws ConfigError("parallel") when there is none.
std::vector<TrainedParameter> trained_parameters(const Graph& g);

// The indices of `params` in the order forward first uses them (unused ones last, in registration order).
std::vector<size_t> forward_use_order(const std::vector<TrainedParameter>& params);

// The first optimizer-phase op (-1: none).
OpId first_optimizer_op(const Graph& g);

// Replaces `from` by `to` in the inputs and outputs of every op of `phase`.
void replace_in_phase(Graph& g, Phase phase, TensorId from, TensorId to);
// Appends t to op's inputs (outputs): the op now uses it, which is all lowering reads for a lifetime; the op's
// kernel traffic (bytes_read, bytes_written) is left as it was.
void append_input(Graph& g, OpId op, TensorId t);
void append_output(Graph& g, OpId op, TensorId t);
// Adds t with its category.
TensorId add_tensor(RankLocalGraph& r, Tensor t, MemoryCategory c);

// Shards the optimizer state of p to `local_rows` rows on dim 0 (AdamW's state follows the unpadded local shard).
void shard_states(Graph& g, const TrainedParameter& p, int64_t local_rows);
// After the update ops' tensors changed size: their traffic becomes the sum of their tensors' bytes (as the
// synthesis made it) and their flops scale with it; each op's workspace (the foreach temporary, sized for its
// group's parameters) is resized to the elements the group's states now hold, and each parameter's foreach
// temporary to its state's shape.
void rescale_optimizer_ops(Graph& g, const std::vector<TrainedParameter>& params);

}  // namespace dlsim::parallel::internal
