#pragma once
// DTR's runtime (Kirisame et al., ICLR 2021) run once over an iteration's issue order, its decisions written
// down as recomputations. Before each op: its evicted inputs are recomputed (recursively: an evicted or freed
// input of a replayed op is recomputed first); then, while the live bytes of the replays and the op exceed the
// budget, the resident tensor with the lowest DTR score is evicted. Evictable: transient, rematerialisable
// (remat_graph.h), not read or written by the op or its replays (the paper's pinning of an op's arguments),
// and recomputable where it is next used. An eviction before position i frees the tensor after position i-1;
// the replay that brings it back lists it among its drops.
// A recomputed tensor stays on the device (DTR's rematerialisation), except when that alone puts the step out of
// reach (its bytes over the budget exceed everything still evictable) and keeping only the op's own inputs brings
// it back in reach: then the other recomputed tensors stay as far as they fit, the soonest needed first, and the
// rest are freed after their last replayed reader and stay evicted (DTR would evict them once unlocked; a plan
// cannot free a kept tensor in the middle of a replay).
// When nothing evictable is left and the op still does not fit, the step goes over the budget (DTR would run
// out of memory there); the run goes on and reports the largest excess.
#include <cstdint>
#include <vector>

#include "policies/swap/dtr/dtr_heuristic.h"
#include "policies/swap/core/remat_graph.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct DtrRun {
  std::vector<Recomputation> recomputations;
  uint64_t peak_bytes = 0;       // the largest live bytes of any step (replays included)
  uint64_t shortfall_bytes = 0;  // how far the worst step stayed over the budget (0: the budget held)
  int evictions = 0;
  int replayed_ops = 0;
  TimeNs recompute_ns = 0;       // the profiled time of every replayed op
};

DtrRun run_dtr(const RematGraph& rg, uint64_t budget, DtrHeuristicKind kind);

}  // namespace dlsim
