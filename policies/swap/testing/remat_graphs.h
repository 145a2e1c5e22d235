#pragma once
// Hand-made iterations for the recomputing policies' tests (dtr, capuchin), with profiles set by hand so that
// every score and live byte can be worked out on paper; and an accounting of live bytes under a plan's
// recomputations written straight from the SwapPlan contract, independent of the policies' own bookkeeping.
#include <algorithm>
#include <string>
#include <vector>

#include "policies/swap/testing/swap_graphs.h"

namespace dlsim::testing {

// A chain of four layers and its backward pass; f1 reads only a persistent weight w (0 bytes), so every
// activation can be recomputed from w. Every activation and gradient is 1 MiB; f1 takes 4 ms, the others 1 ms.
//   pos  op  reads     writes  time (ms)  | pos  op  reads     writes  time (ms)
//   0    f1  w         a1      0-4        | 4    b4  a4        g4      7-8
//   1    f2  a1        a2      4-5        | 5    b3  g4, a3    g3      8-9
//   2    f3  a2        a3      5-6        | 6    b2  g3, a2    g2      9-10
//   3    f4  a3        a4      6-7        | 7    b1  g2, a1    g1      10-11
// Live bytes without a plan (MiB): 1 2 3 4 5 5 4 3.
struct Chain4 {
  Graph g;
  Schedule schedule;
  IterationProfile profile;
  TensorId w, a1, a2, a3, a4, g4, g3, g2, g1;
  OpId f1, f2, f3, f4;
  Chain4() {
    w = add_tensor(g, "w", 0, true);
    a1 = add_tensor(g, "a1", kMiB);
    a2 = add_tensor(g, "a2", kMiB);
    a3 = add_tensor(g, "a3", kMiB);
    a4 = add_tensor(g, "a4", kMiB);
    g4 = add_tensor(g, "g4", kMiB);
    g3 = add_tensor(g, "g3", kMiB);
    g2 = add_tensor(g, "g2", kMiB);
    g1 = add_tensor(g, "g1", kMiB);
    f1 = add_op(g, "f1", {w}, {a1});
    f2 = add_op(g, "f2", {a1}, {a2});
    f3 = add_op(g, "f3", {a2}, {a3});
    f4 = add_op(g, "f4", {a3}, {a4});
    add_op(g, "b4", {a4}, {g4}, Phase::Backward, f4);
    add_op(g, "b3", {g4, a3}, {g3}, Phase::Backward, f3);
    add_op(g, "b2", {g3, a2}, {g2}, Phase::Backward, f2);
    add_op(g, "b1", {g2, a1}, {g1}, Phase::Backward, f1);
    schedule = serial_schedule(g);
    profile.order = schedule.order;
    TimeNs t = 0;
    for (const Op& o : g.ops()) {
      profile.op_start.push_back(t);
      t += (o.id == f1 ? 4 : 1) * kMs;
      profile.op_end.push_back(t);
    }
    profile.iteration_ns = t;
    profile.peak_live_bytes = 5 * kMiB;
  }
};

// Live bytes at each position under `plan`'s recomputations, read from the contract alone: a transient tensor
// is on the device from its first to its last use except during each drop's gap (free_after+1 .. before-1);
// at a replay (before position b) the replayed ops allocate, in order, each output not on the device, dropped
// outputs stay, other outputs are freed after the last replayed op that reads them; each op adds its workspace.
// Result: per position, the larger of the replays' worst moment and the op's own.
inline std::vector<uint64_t> live_bytes_with_recomputations(const Graph& g, const std::vector<OpId>& order,
                                                           const SwapPlan& plan) {
  const int n = static_cast<int>(order.size());
  std::vector<int> first(g.tensors().size(), -1), last(g.tensors().size(), -1);
  for (int i = 0; i < n; ++i) {
    const Op& op = g.op(order[static_cast<size_t>(i)]);
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v) {
        if (first[static_cast<size_t>(t)] < 0) first[static_cast<size_t>(t)] = i;
        last[static_cast<size_t>(t)] = i;
      }
  }
  auto on_device = [&](TensorId t, int pos) {  // on the device during the op at `pos` (replays aside)
    if (g.tensor(t).persistent) return true;
    if (first[static_cast<size_t>(t)] < 0 || pos < first[static_cast<size_t>(t)] || pos > last[static_cast<size_t>(t)]) return false;
    for (const Recomputation& r : plan.recomputations)
      for (const auto& d : r.drops)
        if (d.tensor == t && pos > d.free_after && pos < r.before) return false;
    return true;
  };
  auto ws = [&](const Op& op) { return op.workspace != kNoTensor ? g.tensor(op.workspace).bytes : uint64_t{0}; };
  std::vector<uint64_t> out(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const Op& op = g.op(order[static_cast<size_t>(i)]);
    uint64_t base = 0;  // before op i allocates: what is on the device at i and not first used by it
    for (const Tensor& t : g.tensors())
      if (on_device(t.id, i) && (t.persistent || first[static_cast<size_t>(t.id)] < i)) base += t.bytes;
    uint64_t peak = 0;
    for (const Recomputation& r : plan.recomputations) {
      if (r.before != i) continue;
      auto dropped_here = [&](TensorId t) {
        return std::any_of(r.drops.begin(), r.drops.end(), [&](const auto& d) { return d.tensor == t; });
      };
      for (const auto& d : r.drops) base -= on_device(d.tensor, i) ? g.tensor(d.tensor).bytes : 0;  // back below
      std::vector<TensorId> here;
      uint64_t cur = base;
      for (size_t k = 0; k < r.ops.size(); ++k) {
        const Op& w = g.op(r.ops[k]);
        for (TensorId o : w.outputs) {
          const bool present = (on_device(o, i) && !dropped_here(o) && first[static_cast<size_t>(o)] < i) ||
                               std::find(here.begin(), here.end(), o) != here.end();
          if (!present) {
            cur += g.tensor(o).bytes;
            here.push_back(o);
          }
        }
        peak = std::max(peak, cur + ws(w));
        for (auto it = here.begin(); it != here.end();) {  // replay-only outputs no later replayed op reads
          bool read_later = false;
          for (size_t q = k + 1; q < r.ops.size(); ++q) {
            const auto& in = g.op(r.ops[q]).inputs;
            read_later = read_later || std::find(in.begin(), in.end(), *it) != in.end();
          }
          if (!dropped_here(*it) && !read_later) {
            cur -= g.tensor(*it).bytes;
            it = here.erase(it);
          } else {
            ++it;
          }
        }
      }
      base = cur;
    }
    uint64_t during = base + ws(op);
    for (const Tensor& t : g.tensors())
      if (!t.persistent && first[static_cast<size_t>(t.id)] == i) during += t.bytes;
    out[static_cast<size_t>(i)] = std::max(peak, during);
  }
  return out;
}

inline uint64_t peak_with_recomputations(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan) {
  const auto l = live_bytes_with_recomputations(g, order, plan);
  return l.empty() ? 0 : *std::max_element(l.begin(), l.end());
}

}  // namespace dlsim::testing
