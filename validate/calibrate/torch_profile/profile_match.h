#pragma once
// Matching a profiled training step (validate/calibrate/torch_profile/profile_steps.h) to dlsim's training graph
// of the same model: each top-level forward aten op to a forward op of the graph, by the kinds the aten op can be
// (aten::conv2d -> Conv2d, aten::linear -> Linear, ...), its first input's shape (which must be an input of the
// graph op, or a view of one: the same batch and element count, as dlsim's graphs drop flatten) and the order (the
// graph's forward ops in issue order, a window ahead of the last match; one forward thread assumed); each
// autograd node to the forward op whose autograd sequence numbers it carries (PyTorch numbers the nodes a forward
// op creates from the "Sequence number" that op started at); AccumulateGrad nodes are the parameters' gradient
// stores. Training-mode batch norm's `num_batches_tracked.add_(1)` (an aten::add_ of no tensor shape just before
// the aten::batch_norm) goes with that batch norm, as dlsim prices it. An aten op dlsim has no kind for matches
// the op a recorded graph made from the same aten op (in place or not: hardswish_ and hardswish; a composite the
// trace shows whole, dropout_, by the op it starts with, bernoulli_), which dlsim prices by its traffic. A view or
// bare allocation that launched no kernel (permute, flatten, empty), which a recorded graph holds no op for, is
// set apart with its autograd node, not counted as unmatched. What matches nothing is listed with its place in the
// trace, never dropped without a word.
#include <cstdint>
#include <string>
#include <vector>

#include "validate/calibrate/torch_profile/profile_steps.h"
#include "workloads/graph.h"

namespace dlsim {

struct MatchedForwardOp {
  const ProfileHostOp* host = nullptr;   // the trace's top-level op
  OpId graph_op = -1;                    // the graph's forward op
  const ProfileHostOp* bn_counter = nullptr;  // batch norm's num_batches_tracked.add_(1), if seen
  std::vector<const ProfileHostOp*> nodes;    // autograd's nodes of this op (AccumulateGrad excluded)
};

// A trace op that matched nothing: where it is and why.
struct UnmatchedProfileOp {
  size_t event = 0;  // index into traceEvents order of the kept events (ProfilerTrace::events)
  std::string what;  // "traceEvents[123] aten::foo [2, 3] at +1234.5 us in ProfilerStep#2: no forward op of ..."
};

struct StepMatch {
  const ProfileStep* step = nullptr;
  std::vector<MatchedForwardOp> forward;
  std::vector<const ProfileHostOp*> accumulate_grad;  // AccumulateGrad nodes
  // Views and bare allocations that launched no kernel and match no graph op, and their autograd nodes.
  std::vector<const ProfileHostOp*> without_op;
  std::vector<UnmatchedProfileOp> unmatched;
  size_t graph_forward_ops = 0;     // forward ops of the graph that launch work or are views
  std::vector<OpId> graph_unmatched;  // forward graph ops no trace op matched
};

StepMatch match_profile_step(const ProfilerTrace& trace, const ProfileStep& step, const Graph& g);

// The op kinds an aten op's name may stand for in dlsim's graphs (zoo or recorded); empty when none.
std::vector<OpKind> profile_op_kinds(const std::string& aten_name);

}  // namespace dlsim
