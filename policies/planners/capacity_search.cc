#include "policies/planners/capacity_search.h"

#include <algorithm>

#include "policies/planners/canonical_search.h"

namespace dlsim {

namespace {

// Places a buffer may move in a jittered order, alternating between jittered rounds: small moves keep close to
// the preorder, larger ones explore further.
constexpr int kJitterWindows[2] = {4, 8};
constexpr int kJitterRounds = 8;  // jittered rounds per doubling of their node cap

}  // namespace

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, const ConflictGraph& graph, uint64_t capacity,
                             const SearchLimits& limits, Preorder preorder, const SearchRules& rules) {
  SearchResult r;
  if (buffers.empty()) {
    r.outcome = SearchOutcome::Found;
    return r;
  }
  const int64_t cap = static_cast<int64_t>(std::min<uint64_t>(capacity, uint64_t{1} << 62));
  std::vector<Preorder> orders{preorder};
  if (preorder == Preorder::RoundRobin)
    orders = {Preorder::WidthAreaTotal, Preorder::TotalAreaWidth, Preorder::TotalWidthArea};
  std::vector<std::vector<int>> ranks;
  for (Preorder p : orders) ranks.push_back(priority_rank(buffers, graph, p));
  // Two restart schedules share the nodes, whichever has used fewer going next (so each gets about half):
  // MiniMalloc's round robin over the orders with a node cap that doubles every round, and jittered restarts
  // (each order slightly perturbed by jitter_ranks, a new perturbation every time) with a cap that doubles only
  // every kJitterRounds rounds. The first finds most placements fast; the second escapes the heavy tail of one
  // unlucky order (minimalloc F at LOAD: 10,058 nodes with both, 50,902 with the round robin alone; B 28,733
  // and 99,817). A single order runs uncapped (within the limits), without jitter.
  const bool restarts = orders.size() > 1;
  uint64_t base_cap = restarts ? 2 * buffers.size() : UINT64_MAX / 4, jitter_cap = 2 * buffers.size();
  uint64_t base_nodes = 0, jitter_nodes = 0, jitter_round = 0;
  for (;;) {
    const bool jitter = restarts && jitter_nodes < base_nodes;
    for (size_t j = 0; j < ranks.size(); ++j) {
      uint64_t allowed = jitter ? jitter_cap : base_cap;
      if (limits.node_limit) {
        if (r.nodes >= limits.node_limit) return r;
        allowed = std::min(allowed, limits.node_limit - r.nodes);
      }
      const int window = jitter ? kJitterWindows[jitter_round % 2] : 0;
      const uint64_t seed = jitter_round * ranks.size() + j;
      CanonicalSearch s(buffers, graph, cap, jitter ? jitter_ranks(ranks[j], seed, window) : ranks[j], orders[j],
                        rules, window, seed);
      const SearchOutcome out = s.run(allowed, limits.deadline);
      r.nodes += s.nodes();
      (jitter ? jitter_nodes : base_nodes) += s.nodes();
      if (out == SearchOutcome::Found) {
        r.outcome = out;
        r.offsets = s.offsets();
        return r;
      }
      if (out == SearchOutcome::Infeasible) {
        r.outcome = out;
        return r;
      }
      if (std::chrono::steady_clock::now() >= limits.deadline) return r;
      if (limits.node_limit && r.nodes >= limits.node_limit) return r;
    }
    if (jitter) {
      if (++jitter_round % kJitterRounds == 0) jitter_cap *= 2;
    } else {
      base_cap *= 2;
    }
  }
}

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, uint64_t capacity, const SearchLimits& limits,
                             Preorder preorder, const SearchRules& rules) {
  const ConflictGraph g = build_conflict_graph(buffers, limits.deadline);
  if (!g.complete) return {};
  return search_capacity(buffers, g, capacity, limits, preorder, rules);
}

}  // namespace dlsim
