#pragma once
// A training iteration as a rematerialisation problem (Checkmate's form, Jain et al. MLSys 2020): stage t of the
// issue order computes the op at position t; before it, ops that ran earlier may run again. Checkmate's nodes
// make one value each; dlsim's ops may make several tensors with different lifetimes (max-pool's output and
// indices, batch norm's output and saved statistics), so values here are tensors: each non-persistent tensor
// whose first use is a write is a value of the op that writes it first (its maker), and re-running the maker
// makes all of its values again.
// - Recomputable: forward ops that write no non-persistent tensor they read, and whose values no other op writes
//   except forward ops that update them in place after it (torchvision's ReLU(inplace=True), ResNet's `out +=
//   identity`): those followers are re-run with it, after it, wherever it is re-run after them (its cost and
//   reads grow by theirs). Backward and optimizer ops are never re-run.
// - need[v]: the last stage at which value v can still be needed, by an op of its own or as the input of a
//   re-run: the latest of its users j (or need of j's values, when j may be re-run; or of the maker a follower
//   user is re-run with).
// - base_bytes[t]: what no plan changes during stage t: persistent tensors, and the non-persistent tensors whose
//   first use is a read (the input batch, the labels) while they are live.
#include <cstdint>
#include <vector>

#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

struct RematProblem {
  struct Value {
    TensorId tensor = kNoTensor;
    int maker = -1;           // position
    uint64_t bytes = 0;
    std::vector<int> users;   // positions that read or write it after its maker, ascending
    int need = -1;
    int last_write = -1;      // the last position writing it (its maker, or a later in-place or accumulating write)
  };
  int n = 0;                               // stages = ops, in issue order
  std::vector<OpId> op;                    // by position
  std::vector<double> cost;                // its time, ns (what re-running it costs)
  std::vector<uint64_t> workspace;         // its workspace bytes while it runs
  std::vector<char> recomputable;
  std::vector<std::vector<int>> followers;  // in-place forward ops on its values, ascending positions
  std::vector<std::vector<int>> makes;      // value indices each position makes
  std::vector<std::vector<int>> reads;      // value indices each position reads or writes but does not make
  std::vector<Value> values;
  std::vector<uint64_t> base_bytes;         // by stage
  // The last stage before which position i can be re-run and read what it read at its first run: the first later
  // write of one of its inputs (a weight the optimizer updates, under a schedule that overlaps the two) bounds it.
  // State the op itself updates in place (batch norm's running statistics) does not.
  std::vector<int> stable_until;

  // `op_ns` by position (a profile's op_end - op_start).
  static RematProblem build(const Graph& g, const std::vector<OpId>& order, const std::vector<double>& op_ns);

  uint64_t made_bytes(int i) const;  // bytes of the values position i makes
  int need_of(int i) const;          // the latest need of its values (i when it makes none)
  // Whether position i may be re-run in stage t (i < t): recomputable, needed, and reading what it read, it and the
  // followers re-run with it.
  bool can_rerun(int i, int t) const;
  // What re-running position i in stage t costs (ns) and reads: its own, plus its followers' before t.
  double rerun_cost(int i, int t) const;
  std::vector<int> rerun_reads(int i, int t) const;  // value indices, ascending, its own values excluded
  // Whether value v is read in stage t by a re-run of i (directly, or by one of i's followers before t).
  bool rerun_reads_value(int i, int t, int v) const;
};

}  // namespace dlsim
