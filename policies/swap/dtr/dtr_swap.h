#pragma once
// `dtr`: Dynamic Tensor Rematerialization (Kirisame et al., ICLR 2021, arXiv 2006.09616; notes
// allocators-and-swap.md B8). DTR is an online runtime: it evicts tensors greedily when an allocation would
// exceed a budget and recomputes them when they are next needed. Here its runtime runs once over the
// schedule's issue order with the profiled op times (dtr_runtime.h), and what it did is the plan: each
// eviction a drop, each recomputation a replay before the op that needed it. Nothing is copied to the host.
// Parameters: the budget (limit_fraction / limit_mb, memory_limit.h), the score (heuristic: full, eq, local;
// dtr_heuristic.h) and the cap on replays (max_replays_per_op, dtr_runtime.h). A budget below what any schedule
// needs (least_step_bytes) is reported (budget_reachable: false, least_bytes) and the plan aims at that least
// instead of thrashing. Tests: dtr_swap_test.cc.
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/dtr/dtr_heuristic.h"
#include "policies/swap/core/memory_limit.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct DtrOptions {
  DtrHeuristicKind heuristic = DtrHeuristicKind::Eq;
  MemoryLimit limit;
  int max_replays_per_op = 20;  // 0: no cap

  static const ParamBindings<DtrOptions>& parameters();
};

class DtrSwap : public SwapPolicy {
 public:
  explicit DtrSwap(DtrOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  DtrOptions o_;
};

}  // namespace dlsim
