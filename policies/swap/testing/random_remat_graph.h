#pragma once
// Random training-shaped graphs for recomputation and swap planners: a forward chain with skip connections and
// in-place updates (ReLU(inplace=True)), a loss, and a backward op per forward op reading what autograd would keep
// (the op's inputs and output) and the incoming gradient. Sizes span two orders of magnitude; op times 20..220 us.
// The same seed gives the same graph.
#include <cstdint>
#include <string>
#include <vector>

#include "policies/swap/testing/swap_graphs.h"

namespace dlsim::testing {

struct RandomRematGraph {
  Graph g;
  std::vector<TimeNs> op_ns;  // by op, in the stored (serial) order

  explicit RandomRematGraph(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ULL + 1) {
    const int n = 4 + static_cast<int>(next(4));
    std::vector<TensorId> act = {add_tensor(g, "x", 1000)};
    std::vector<OpId> fwd;
    std::vector<std::vector<TensorId>> reads;
    for (int i = 0; i < n; ++i) {
      const TensorId y = add_tensor(g, "a" + std::to_string(i), 10000 * (1 + next(20)));
      std::vector<TensorId> in = {act.back()};
      if (act.size() > 2 && next(3) == 0) in.push_back(act[next(act.size() - 1)]);  // a skip connection
      fwd.push_back(add_op(g, "F" + std::to_string(i), in, {y}));
      reads.push_back(in);
      act.push_back(y);
      if (next(4) == 0) add_op(g, "R" + std::to_string(i), {y}, {y});  // in place
    }
    TensorId grad = add_tensor(g, "g" + std::to_string(n), 1000);
    add_op(g, "loss", {act.back()}, {grad}, Phase::Backward);
    for (int i = n - 1; i >= 0; --i) {
      const TensorId gi = add_tensor(g, "g" + std::to_string(i), 1000 * (1 + next(5)));
      std::vector<TensorId> in = reads[static_cast<size_t>(i)];
      in.push_back(grad);
      in.push_back(act[static_cast<size_t>(i) + 1]);
      add_op(g, "B" + std::to_string(i), in, {gi}, Phase::Backward, fwd[static_cast<size_t>(i)]);
      grad = gi;
    }
    for (size_t i = 0; i < g.ops().size(); ++i) op_ns.push_back(static_cast<TimeNs>(20000 + next(200000)));
  }

 private:
  uint64_t state_;
  uint64_t next(uint64_t n) {  // PCG-style LCG step, the high bits
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return (state_ >> 33) % n;
  }
};

}  // namespace dlsim::testing
