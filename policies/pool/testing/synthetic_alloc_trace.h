#pragma once
// A synthetic, CNN-like stream of allocations and frees for pool tests and benchmarks: the forward pass keeps
// one activation per layer and frees a short-lived workspace right away; the backward pass walks the layers in
// reverse (with some local reordering, as real schedulers do), allocating a gradient that dies soon after and
// freeing the layer's activation. Sizes mix tiny (biases, BN statistics), medium and large activations.
// Deterministic: a seed gives the same trace on every platform (SplitMix64, no std distributions).
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "policies/pool/pool_policy.h"

namespace dlsim::testing {

struct AllocTraceOp {
  bool alloc = true;
  uint32_t id = 0;     // tensor id: an alloc and its free share it
  uint64_t bytes = 0;  // allocs only
  int stream = 0;
};

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }  // n is small: the modulo bias is irrelevant here
  uint64_t between(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }

 private:
  uint64_t state_;
};

// `layers` layers, `iterations` training iterations, tensors spread over `streams` streams (1 or more).
inline std::vector<AllocTraceOp> cnn_like_trace(uint64_t seed, int layers, int iterations, int streams) {
  SplitMix64 rng(seed);
  auto size = [&]() -> uint64_t {
    const uint64_t r = rng.below(100);
    if (r < 30) return rng.between(1, 64 << 10);                // tiny
    if (r < 75) return rng.between(64 << 10, 4 << 20);          // medium
    if (r < 97) return rng.between(4 << 20, 32 << 20);          // large activations
    return rng.between(32 << 20, 96 << 20);                     // a few very large ones
  };
  auto stream = [&]() { return streams > 1 ? static_cast<int>(rng.below(static_cast<uint64_t>(streams))) : 0; };
  std::vector<AllocTraceOp> ops;
  uint32_t next_id = 0;
  std::vector<uint64_t> act_size(static_cast<size_t>(layers));
  for (int l = 0; l < layers; ++l) act_size[static_cast<size_t>(l)] = size();  // shapes repeat every iteration
  for (int it = 0; it < iterations; ++it) {
    std::vector<AllocTraceOp> acts;
    for (int l = 0; l < layers; ++l) {
      AllocTraceOp a{true, next_id++, act_size[static_cast<size_t>(l)], 0};
      ops.push_back(a);
      acts.push_back(a);
      const uint32_t ws = next_id++;
      ops.push_back({true, ws, size(), stream()});
      ops.push_back({false, ws, 0, 0});
    }
    std::vector<uint32_t> order;
    for (int l = layers - 1; l >= 0; --l) order.push_back(acts[static_cast<size_t>(l)].id);
    for (size_t i = 0; i + 1 < order.size(); ++i)
      if (rng.below(5) == 0) std::swap(order[i], order[i + 1]);
    std::vector<uint32_t> pending_grads;
    for (uint32_t act : order) {
      const uint32_t g = next_id++;
      ops.push_back({true, g, size(), stream()});
      pending_grads.push_back(g);
      if (pending_grads.size() > 2) {  // a gradient lives while the next two layers run
        ops.push_back({false, pending_grads.front(), 0, 0});
        pending_grads.erase(pending_grads.begin());
      }
      ops.push_back({false, act, 0, 0});
    }
    for (uint32_t g : pending_grads) ops.push_back({false, g, 0, 0});
  }
  return ops;
}

// Phases of different tensor sizes, as when a run moves from one model or batch size to another: each phase
// allocates `per_phase` tensors around its own scale (tiny, medium, large, huge, in a seeded order), frees most
// soon after (at most 8 live), and keeps one of them to the end of the trace. Pools that grow by regions
// end up with regions sized for an earlier phase that hold nothing but can block growth: TF's garbage
// collection and PyTorch's cache release are there for exactly this.
inline std::vector<AllocTraceOp> phase_change_trace(uint64_t seed, int phases, int per_phase, int streams) {
  SplitMix64 rng(seed);
  const uint64_t scales[] = {64 << 10, 2 << 20, 24 << 20, 160 << 20};
  std::vector<AllocTraceOp> ops;
  std::vector<uint32_t> kept;
  uint32_t next_id = 0;
  for (int ph = 0; ph < phases; ++ph) {
    const uint64_t scale = scales[rng.below(4)];
    std::vector<uint32_t> live;
    for (int i = 0; i < per_phase; ++i) {
      const uint32_t id = next_id++;
      const int stream = streams > 1 ? static_cast<int>(rng.below(static_cast<uint64_t>(streams))) : 0;
      ops.push_back({true, id, rng.between(scale / 2, scale * 3 / 2), stream});
      if (i == 0) {
        kept.push_back(id);
        continue;
      }
      live.push_back(id);
      if (live.size() > 8 || rng.below(3) == 0) {
        const size_t victim = static_cast<size_t>(rng.below(live.size()));
        ops.push_back({false, live[victim], 0, 0});
        live.erase(live.begin() + static_cast<long>(victim));
      }
    }
    for (uint32_t id : live) ops.push_back({false, id, 0, 0});
  }
  for (uint32_t id : kept) ops.push_back({false, id, 0, 0});
  return ops;
}

// Replays a trace through a pool (a free whose allocation failed is skipped), calling check() every
// `check_every` operations. Returns the failed allocations and how many were still live at the end (0 for a
// well-formed trace).
struct ReplayResult {
  size_t ooms = 0;
  size_t left_live = 0;
};
template <class Pool, class Check>
ReplayResult replay_trace(Pool& pool, const std::vector<AllocTraceOp>& trace, size_t check_every, Check check) {
  std::map<uint32_t, DevPtr> live;
  ReplayResult r;
  size_t n = 0;
  for (const AllocTraceOp& op : trace) {
    if (op.alloc) {
      if (auto p = pool.allocate({op.bytes, op.stream})) live.emplace(op.id, *p);
      else ++r.ooms;
    } else if (auto it = live.find(op.id); it != live.end()) {
      pool.deallocate(it->second);
      live.erase(it);
    }
    if (++n % check_every == 0) check();
  }
  r.left_live = live.size();
  return r;
}

}  // namespace dlsim::testing
