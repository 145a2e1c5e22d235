#pragma once
// The load of a training iteration in issue order: where each tensor is used, and the live bytes during each
// op, with or without a swap plan. The host issues allocations and frees in program order (program/lower.h), so
// these figures are what the simulator's executor counts, whatever the timing: a plan's memory effect is
// known before it runs, and only its time needs the simulator.
//
// Live during the op at position i: every persistent tensor, every other tensor with first use <= i <= last
// use (with a plan: or the last replay reading it), and the op's workspace (when it has bytes). A swapped tensor is off the device during positions
// free_after+1 .. in_issue_after of its action; a dropped tensor during drop point+1 .. before-1 of its
// recomputation. A replay runs before the op at its `before` position: the load counted there is the larger of
// the op's and the replay's peak (the tensors it makes, the ones it frees again, each replayed op's workspace).
#include <cstdint>
#include <utility>
#include <vector>

#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

class ProgramLoad {
 public:
  ProgramLoad(const Graph& g, const std::vector<OpId>& order);

  int positions() const { return static_cast<int>(load_.size()); }
  OpId order_at(int i) const { return order_[static_cast<size_t>(i)]; }
  const std::vector<uint64_t>& load() const { return load_; }  // by position, no swaps
  uint64_t peak() const;
  // Positions whose op reads or writes `t` (workspace excluded), ascending, each once.
  const std::vector<int>& uses(TensorId t) const { return uses_[static_cast<size_t>(t)]; }
  // Positions whose op writes `t`, ascending.
  const std::vector<int>& writes(TensorId t) const { return writes_[static_cast<size_t>(t)]; }

  // The load with `plan` applied; `free_points` from resolve_free_points.
  std::vector<uint64_t> with_plan(const SwapPlan& plan, const std::vector<int>& free_points) const;
  // Its peak, the free points resolved for the streams of `stream_of` (by OpId).
  uint64_t peak_with(const SwapPlan& plan, const std::vector<int>& stream_of) const;

 private:
  const Graph& g_;
  std::vector<OpId> order_;
  std::vector<uint64_t> load_;
  std::vector<std::vector<int>> uses_, writes_;

  void add_replay_peaks(const SwapPlan& plan, const std::vector<int>& free_points,
                        const std::vector<std::vector<int>>& drop_points, const std::vector<int>& held,
                        std::vector<uint64_t>& load) const;
};

// The position after which each drop of each recomputation frees its tensor: free_after when set, else the
// last position before `before` whose op uses the tensor (-1 when none: a plan the lowering rejects).
// Indexed [recomputation][drop].
std::vector<std::vector<int>> resolve_drop_points(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan);

// What each replay reads (Graph::replay_inputs) that it does not make itself, and what it holds
// (Recomputation::held): (tensor, the replay's `before`), persistent tensors left out. The lowering keeps such a tensor allocated until the replay, as a use there (torch.utils.checkpoint keeps a
// segment's inputs until its backward); ProgramLoad counts it so. Recomputations naming ops outside the graph
// are skipped (the lowering rejects them).
std::vector<std::pair<TensorId, int>> replay_reads(const Graph& g, const SwapPlan& plan);

// For each tensor of rc.held, the index in rc.ops after whose launch the cache lets it go (-1: before the first):
// the replay reaches its op (after the last replayed op that ran before the op that made it, in `order`) and pops
// it, and it lives on while a later replayed op reads it. A tensor that the op at `before` or a later op uses stays
// anyway; this only says when the replay is done with it.
std::vector<int> held_release(const Graph& g, const std::vector<OpId>& order, const Recomputation& rc);

// The stream a persistent tensor is allocated on when an iteration starts: where its last swap round trip of
// the iteration brings it back (the stream of the op its last copy-in serves), else stream 0. The setup allocates
// it there, so that every iteration starts as the one before it ended. Indexed by TensorId; -1 for the others.
std::vector<int> persistent_home_streams(const Graph& g, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                                         const SwapPlan& plan);

// The position after which each action's tensor is freed: free_after when set, else the lowering's default
// (after the next op on the tensor's allocation stream before in_issue_after, else at in_issue_after). The
// allocation stream is the stream of the tensor's first use (a persistent tensor's home stream, above), then
// that of the op a copy-in served. program/lower.cc frees there; ProgramLoad counts it there.
std::vector<int> resolve_free_points(const Graph& g, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                                     const SwapPlan& plan);

}  // namespace dlsim
