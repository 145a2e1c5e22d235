#pragma once
// `swapadvisor`: SwapAdvisor (Huang, Jin, Li, ASPLOS'20; notes allocators-and-swap.md B3): a genetic algorithm
// over the op schedule and the memory split, each individual turned into swaps by SwapAdvisor's planner
// (swapadvisor_selection.h: Belady eviction, early swap-in) and scored by the simulator itself.
// - Genome: a priority per op (decoded into a topological order of Graph::dag() by always issuing the ready op
//   of highest priority, so every child is a valid schedule) and a slot count per size class.
// - First generation: the schedule's own order with the slots of the no-swap run scaled down to the limit,
//   and mutants of it. Each generation keeps the best quarter and fills the rest with children of tournament
//   pairs: uniform crossover of priorities and of slot counts, then mutation (two ops' priorities swapped, one
//   class given a slot more or less), slots repaired to the limit.
// - Fitness: the simulated iteration time (SwapContext::evaluator); infeasible individuals rank last.
// The encoding by priorities and the operators are ours (the paper's exact operators are recalled, not read).
// Deterministic for a seed. Tests: swapadvisor_swap_test.cc.
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/memory_limit.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct SwapAdvisorOptions {
  MemoryLimit limit;
  uint64_t min_bytes = uint64_t{1} << 20;
  int size_classes = 16;
  int population = 12;
  int generations = 8;
  int64_t seed = 1;
  bool reorder = true;  // search the op schedule too (false: the schedule's order, memory split only)

  static const ParamBindings<SwapAdvisorOptions>& parameters();
};

class SwapAdvisorSwap : public SwapPolicy {
 public:
  explicit SwapAdvisorSwap(SwapAdvisorOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  SwapAdvisorOptions o_;
};

}  // namespace dlsim
