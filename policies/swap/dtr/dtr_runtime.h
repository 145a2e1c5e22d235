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
// A budget out of reach does not make it thrash (evicting all it can before every op, then replaying long chains
// to bring it back, for a peak no lower): no step evicts below the least any schedule needs at some op
// (least_step_bytes: persistent, op inputs and outputs, what cannot be evicted), nor below the floor an earlier
// step could not go under (its live bytes less all it could evict), since the iteration's peak is at least
// both. A budget within reach is untouched by either. And past `replay_cap` replayed ops (a documented
// parameter, dtr_swap.h) no more is evicted and every recomputed tensor stays: what was evicted comes back once
// when needed and the rest of the iteration keeps what it has, so that no input makes the pass explode.
#include <cstdint>
#include <vector>

#include "policies/swap/dtr/dtr_heuristic.h"
#include "policies/swap/core/remat_graph.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

// The least live bytes any schedule of the iteration holds at some op, and that op's position: persistent tensors,
// the transient ones nothing can recompute while they are live, the op's inputs and the tensors it makes, and its
// workspace. A budget below it is out of reach for DTR and every other recomputing plan.
struct LeastStepBytes {
  uint64_t bytes = 0;
  int position = -1;
};
LeastStepBytes least_step_bytes(const RematGraph& rg);

struct DtrLimits {
  int64_t replay_cap = 0;          // the most replayed ops before evictions stop; 0: no cap
  bool cache_full_scores = true;   // false: full's scores walked every time (the tests' reference)
};

struct DtrRun {
  std::vector<Recomputation> recomputations;
  uint64_t peak_bytes = 0;       // the largest live bytes of any step (replays included)
  uint64_t shortfall_bytes = 0;  // how far the worst step stayed over the budget (0: the budget held)
  int evictions = 0;
  int replayed_ops = 0;
  TimeNs recompute_ns = 0;       // the profiled time of every replayed op
  LeastStepBytes least;          // least_step_bytes: above the budget, the budget is out of reach
  bool replay_cap_reached = false;
  int evictions_stopped_at = -1;  // the position where the cap stopped evictions
};

DtrRun run_dtr(const RematGraph& rg, uint64_t budget, DtrHeuristicKind kind, DtrLimits limits = {});

}  // namespace dlsim
