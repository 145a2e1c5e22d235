#pragma once
// What a recomputing policy (dtr, capuchin) needs to know about an iteration in issue order: which tensors can
// be dropped and brought back by re-running the op that wrote them, what that op costs, and whether its inputs
// will still hold the same values when it runs again. Positions index the issue order.
//
// A tensor is rematerialisable when it is transient, exactly one op writes it, and that op is replayable: not an
// optimizer step, and the only writer of each transient tensor it writes, none of which it reads. So in-place
// ReLU/add are not replayable and what they overwrite cannot be dropped here, although the SwapPlan contract
// allows re-running them after the op that made their operand (checkpoint and checkmate do; dtr and capuchin do
// not yet). Writing the other outputs again changes no value. Persistent
// state updated in place (batch norm's running statistics) does not stop a replay: it is updated again.
// A replay of op W before position T gives the values W gave at pos(W) only if no input of W was written in
// pos(W)+1 .. T-1: stable_until(W) is the last T for which that holds.
#include <cstdint>
#include <vector>

#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

class RematGraph {
 public:
  // `profile` gives each op's time (op_end - op_start, by position); an empty profile: every op costs 1 ns.
  RematGraph(const Graph& g, const std::vector<OpId>& order, const IterationProfile& profile);

  const Graph& graph() const { return g_; }
  const ProgramLoad& load() const { return load_; }
  const std::vector<OpId>& order() const { return order_; }
  int positions() const { return load_.positions(); }
  const Op& op_at(int pos) const { return g_.op(load_.order_at(pos)); }
  TimeNs cost(int pos) const { return cost_[static_cast<size_t>(pos)]; }
  uint64_t bytes(TensorId t) const { return g_.tensor(t).bytes; }
  uint64_t workspace_bytes(int pos) const;
  bool persistent(TensorId t) const { return g_.tensor(t).persistent; }
  // First and last position that reads or writes `t` (-1 when unused).
  int first_use(TensorId t) const;
  int last_use(TensorId t) const;
  // The first position >= `from` that reads or writes `t`, or -1.
  int next_use(TensorId t, int from) const;
  bool live_at(TensorId t, int pos) const { return first_use(t) >= 0 && first_use(t) <= pos && pos <= last_use(t); }

  // The position of the op that writes `t`, when `t` is rematerialisable; else -1.
  int producer(TensorId t) const { return producer_[static_cast<size_t>(t)]; }
  bool replayable(int pos) const { return replayable_[static_cast<size_t>(pos)] != 0; }
  int stable_until(int pos) const { return stable_until_[static_cast<size_t>(pos)]; }
  // Rematerialisable tensors whose producer reads `t` (their recomputation needs `t`).
  const std::vector<TensorId>& children(TensorId t) const { return children_[static_cast<size_t>(t)]; }

  // Whether `t` can be recomputed right before position `at` when every transient tensor live at `at` is then
  // on the device or can itself be recomputed: its producer ran before `at`, its inputs are unchanged since,
  // and each input is persistent, live at `at`, or (dead by then) recomputable the same way.
  bool recomputable_at(TensorId t, int at) const;

 private:
  const Graph& g_;
  std::vector<OpId> order_;
  ProgramLoad load_;
  std::vector<TimeNs> cost_;
  std::vector<int> producer_;
  std::vector<uint8_t> replayable_;
  std::vector<int> stable_until_;
  std::vector<std::vector<TensorId>> children_;
};

}  // namespace dlsim
