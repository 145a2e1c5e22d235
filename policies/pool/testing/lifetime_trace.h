#pragma once
// A synthetic repeating training trace for the lifetime-aware pool tests (smartpool, planned): a few
// persistent tensors at setup, then identical iterations of allocations with overlapping lifetimes, optionally
// one tensor that lives across the iteration boundary and one unexpected extra allocation.
#include <map>
#include <stdexcept>
#include <vector>

#include "policies/pool/pool_policy.h"

namespace dlsim::testing {

struct TraceShape {
  int iterations = 12;
  int tensors = 60;              // per iteration; each allocation frees the one allocated 3 steps before
  bool cross_iteration = false;  // one tensor allocated at step 50, freed at step 10 of the next iteration
  int extra_alloc_iteration = -1;  // an allocation outside the pattern (size 777) in this iteration
  bool call_iteration_end = true;  // and iteration_begin
};

// Ops per steady iteration (Malloc and Free both count).
inline int ops_per_iteration(const TraceShape& s) { return 2 * s.tensors + (s.cross_iteration ? 2 : 0); }

// Runs the trace; `on_iteration_start(i)` is called before iteration i. Frees everything at the end.
template <class Hook>
void run_trace(PoolPolicy& pool, const TraceShape& s, Hook on_iteration_start) {
  auto alloc = [&](uint64_t bytes) {
    auto p = pool.allocate({bytes, 0});
    if (!p) throw std::runtime_error("unexpected out of memory");
    return *p;
  };
  std::vector<DevPtr> persistent = {alloc(4096), alloc(100000), alloc(512)};
  DevPtr cross = 0;
  bool cross_live = false;
  for (int it = 0; it < s.iterations; ++it) {
    on_iteration_start(it);
    if (s.call_iteration_end) pool.iteration_begin(it);
    std::vector<DevPtr> live;
    DevPtr extra = 0;
    for (int i = 0; i < s.tensors; ++i) {
      live.push_back(alloc(static_cast<uint64_t>((i % 7 + 1) * 1000 + (i % 3) * 24)));
      if (i >= 3) pool.deallocate(live[i - 3]);
      if (s.cross_iteration && i == 10 && cross_live) {
        pool.deallocate(cross);
        cross_live = false;
      }
      if (s.cross_iteration && i == 50) {
        cross = alloc(5000);
        cross_live = true;
      }
      if (it == s.extra_alloc_iteration && i == 20) extra = alloc(777);
      if (it == s.extra_alloc_iteration && i == 22) pool.deallocate(extra);
    }
    for (int i = s.tensors - 3; i < s.tensors; ++i) pool.deallocate(live[i]);
    if (s.call_iteration_end) pool.iteration_end(it);
  }
  if (cross_live) pool.deallocate(cross);
  for (DevPtr p : persistent) pool.deallocate(p);
}

}  // namespace dlsim::testing
