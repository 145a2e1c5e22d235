#pragma once
// Hand-made iterations for the recomputing policies' tests (dtr, capuchin), with profiles set by hand so that
// every score and live byte can be worked out on paper.
#include <string>
#include <vector>

#include "policies/swap/core/program_load.h"
#include "policies/swap/testing/swap_graphs.h"
#include "policies/concurrency/concurrency_policy.h"

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
    schedule = serial_schedule_of(g);
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

// Live bytes per position under `plan`, as the simulator's executor counts them (program_load.h), on one stream.
// Checkmate's hand-worked chain (checkmate_swap_test.cc, checkmate_baselines_test.cc): three layers and their
// backward pass, A the slow one.
//   pos 0 A: x -> a (100 kB, 3 us)  pos 3 Cb: b -> g2 (10 kB)
//   pos 1 B: a -> b (100 kB)        pos 4 Bb: (a, g2) -> g1
//   pos 2 C: b -> c (10 kB)         pos 5 Ab: (x, g1) -> g0
// Without recomputation: 211 kB during C (x 1 kB, a, b, c) and during Cb (x, a, b, g2).
struct CheckmateChain {
  Graph g;
  std::vector<TimeNs> ns = {3000, 1000, 1000, 1000, 1000, 1000};  // by position
  CheckmateChain() {
    const TensorId x = add_tensor(g, "x", 1000), a = add_tensor(g, "a", 100000), b = add_tensor(g, "b", 100000),
                   c = add_tensor(g, "c", 10000), g2 = add_tensor(g, "g2", 10000), g1 = add_tensor(g, "g1", 1000),
                   g0 = add_tensor(g, "g0", 1000);
    const OpId A = add_op(g, "A", {x}, {a});
    const OpId B = add_op(g, "B", {a}, {b});
    const OpId C = add_op(g, "C", {b}, {c});
    add_op(g, "Cb", {b}, {g2}, Phase::Backward, C);
    add_op(g, "Bb", {a, g2}, {g1}, Phase::Backward, B);
    add_op(g, "Ab", {x, g1}, {g0}, Phase::Backward, A);
  }
};

inline std::vector<uint64_t> live_bytes_with(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan) {
  const ProgramLoad load(g, order);
  const std::vector<int> one_stream(g.ops().size(), 0);
  return load.with_plan(plan, resolve_free_points(g, order, one_stream, plan));
}

inline uint64_t peak_of(const std::vector<uint64_t>& load) {
  uint64_t m = 0;
  for (uint64_t l : load) m = l > m ? l : m;
  return m;
}

}  // namespace dlsim::testing
