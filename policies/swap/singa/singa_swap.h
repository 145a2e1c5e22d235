#pragma once
// `singa`: the automatic swapping of Zhang et al. (SINGA's SwapGPU; notes singa-memory-management.md
// sections 4 and 8): the profiled iteration as SINGA records it (singa_trace.h), its candidates, scores and
// greedy selection (singa_select.h), its two schedulers (singa_schedule.h), and the swap plan they make.
// Indices become positions in the issue order: a command SINGA issues at an index is issued after the op
// before that index's op (or after its own op, for a Free); a swap whose transfers leave no absence (the
// block would be freed at or after the point where it must be allocated again) is dropped, where SINGA would
// carry it out for no saving. Tests: singa_swap_test.cc.
#include <vector>

#include "common/param_binding.h"
#include "policies/swap/core/memory_limit.h"
#include "policies/swap/singa/singa_schedule.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct SingaOptions {
  SingaRank rank = SingaRank::Vote;            // majority_voting: the final code's default
  SingaMode mode = SingaMode::StickToLimit;    // the final Plan's mode
  MemoryLimit limit;
  uint64_t min_bytes = uint64_t{1} << 20;      // smallest_block
  bool fit_transfers = true;                   // SINGA's fitted line; false: the link's own latency/bandwidth

  static const ParamBindings<SingaOptions>& parameters();
};

class SingaSwap : public SwapPolicy {
 public:
  explicit SingaSwap(SingaOptions o) : o_(o) {}
  SwapResult plan(const SwapContext& ctx) override;

 private:
  SingaOptions o_;
};

}  // namespace dlsim
