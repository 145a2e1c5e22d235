#pragma once
// What the forward pass leaves for the backward pass, and the most of it alive at once during the backward pass,
// under a plan's recomputations: the figures `dlsim model --swap` prints, in the accounting of docs/models.md
// (activations only: parameters, gradients, optimizer state, inputs and workspaces are not counted). Pure
// accounting over the graph, the plan and the issue order: no simulator.
//
// A tensor counts at position p (p at or after the first backward op) when it is a non-persistent activation a
// forward op writes, it is on the device at p, and it is used at p or later. "Used": read or written by an op of
// the order, or read by a replayed op of a recomputation (at its `before`: torch.utils.checkpoint's closure holds
// a segment's inputs until the recomputation), or held by one (Recomputation::held, selective checkpointing's
// cache, likewise until its `before`, or until `before` - 1 when the replay lets it go before its last op:
// the count at `before` is the replay's end, every recomputed tensor back). "On the device": from its first use to its last, except during
// each drop's gap (after the drop point, up to `before`), where the drop point is free_after or, when -1, the
// last position before `before` whose op uses it. A dropped tensor is back from `before` on. Tensors a replay
// makes only for the replay (not dropped ones) are transient and not counted: PyTorch keeps only what the
// segment's backward nodes saved.
//   saved_for_backward_bytes   the tensors that count at the first backward position (as the forward pass
//                              ends). Without recomputations: summarize()'s saved_for_backward_bytes.
//   backward_peak_saved_bytes  the largest count over the backward positions (recomputed tensors included).
// Swap actions and extra copies are not accounted (their residency is the simulator's business: `dlsim run`).
#include <cstdint>
#include <vector>

#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

struct SavedBytes {
  uint64_t saved_for_backward_bytes = 0;
  uint64_t backward_peak_saved_bytes = 0;
  int peak_position = -1;  // where the peak is (a position of `order`), -1 when there is no backward op
};

SavedBytes saved_bytes(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan);

}  // namespace dlsim
