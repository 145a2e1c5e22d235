#include "policies/planners/capacity_search.h"

#include <algorithm>
#include <numeric>

#include "policies/planners/rank_min_tree.h"
#include "policies/planners/section_tree.h"

namespace dlsim {

namespace {

// Places a buffer may move in a jittered order, alternating between jittered rounds: small moves keep close to
// the preorder (minimalloc I is found with 4), larger ones explore further (H is found with 8).
constexpr int kJitterWindows[2] = {4, 8};
constexpr int kJitterRounds = 8;   // jittered rounds per doubling of their node cap

// rank[i]: position of buffer i in the static priority order (lower is tried first among equal offsets).
std::vector<int> priority_rank(const std::vector<DsaBuffer>& b, const ConflictGraph& g, Preorder order) {
  const int n = static_cast<int>(b.size());
  const SectionTree live(g.live_bytes);
  std::vector<int64_t> total(n), width(n);
  std::vector<unsigned __int128> area(n);
  for (int i = 0; i < n; ++i) {
    total[i] = live.max_range(g.first[i], g.last[i]);
    width[i] = b[i].upper - b[i].lower;
    area[i] = static_cast<unsigned __int128>(b[i].size) * static_cast<uint64_t>(width[i]);
  }
  auto key = [&](int i, char c) -> unsigned __int128 {
    if (c == 'W') return static_cast<uint64_t>(width[i]);
    if (c == 'T') return static_cast<uint64_t>(total[i]);
    return area[i];
  };
  const char* keys = order == Preorder::TotalAreaWidth ? "TAW" : order == Preorder::TotalWidthArea ? "TWA" : "WAT";
  std::vector<int> by(n);
  std::iota(by.begin(), by.end(), 0);
  std::sort(by.begin(), by.end(), [&](int x, int y) {
    for (const char* c = keys; *c; ++c)
      if (key(x, *c) != key(y, *c)) return key(x, *c) > key(y, *c);
    return x < y;
  });
  std::vector<int> rank(n);
  for (int r = 0; r < n; ++r) rank[by[r]] = r;
  return rank;
}

// A deterministic perturbation of a priority order for a jittered restart: ranks plus a pseudo-random offset
// in [0, window), re-sorted, so each buffer moves only a few places; seeded by the restart number.
std::vector<int> jitter_ranks(const std::vector<int>& rank, uint64_t seed, int window) {
  const int n = static_cast<int>(rank.size());
  uint64_t st = seed * 0x9E3779B97F4A7C15ull + 12345;
  std::vector<std::pair<int64_t, int>> key(n);
  for (int i = 0; i < n; ++i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    key[i] = {static_cast<int64_t>(rank[i]) + static_cast<int64_t>((st >> 33) % static_cast<uint64_t>(window)), rank[i]};
  }
  std::vector<int> by(n);
  std::iota(by.begin(), by.end(), 0);
  std::sort(by.begin(), by.end(), [&](int x, int y) { return key[x] < key[y]; });
  std::vector<int> out(n);
  for (int r = 0; r < n; ++r) out[by[r]] = r;
  return out;
}

class CanonicalSearch {
 public:
  CanonicalSearch(const std::vector<DsaBuffer>& b, const ConflictGraph& g, int64_t capacity, std::vector<int> rank)
      : b_(b), g_(g), cap_(capacity), n_(static_cast<int>(b.size())), rank_(std::move(rank)), by_rank_(n_),
        min_off_(n_, 0), placed_(n_, 0), solution_(n_, 0), tree_(n_), unplaced_(g.live_bytes) {
    for (int i = 0; i < n_; ++i) {
      by_rank_[rank_[i]] = i;
      tree_.set(rank_[i], 0, static_cast<int64_t>(b[i].size));
    }
    // Section membership lists for the unplaced-floor test, when they are small enough to scan.
    uint64_t span = 0;
    for (int i = 0; i < n_; ++i) span += static_cast<uint64_t>(g.last[i] - g.first[i] + 1);
    if (span <= kMaxMembership) {
      const size_t sections = g.live_bytes.size();
      members_begin_.assign(sections + 1, 0);
      for (int i = 0; i < n_; ++i)
        for (int s = g.first[i]; s <= g.last[i]; ++s) ++members_begin_[s + 1];
      for (size_t s = 0; s < sections; ++s) members_begin_[s + 1] += members_begin_[s];
      members_.resize(span);
      std::vector<uint32_t> fill(members_begin_.begin(), members_begin_.end() - 1);
      for (int i = 0; i < n_; ++i)
        for (int s = g.first[i]; s <= g.last[i]; ++s) members_[fill[s]++] = i;
      stamp_.assign(sections, 0);
      // Buffers by first section, and how many unplaced buffers cross each section boundary.
      starts_begin_.assign(sections + 1, 0);
      for (int i = 0; i < n_; ++i) ++starts_begin_[g.first[i] + 1];
      for (size_t s = 0; s < sections; ++s) starts_begin_[s + 1] += starts_begin_[s];
      starts_.resize(n_);
      std::vector<uint32_t> at(starts_begin_.begin(), starts_begin_.end() - 1);
      for (int i = 0; i < n_; ++i) starts_[at[g.first[i]]++] = static_cast<uint32_t>(i);
      crossing_.assign(sections, 0);
      for (int i = 0; i < n_; ++i)
        for (int s = g.first[i]; s < g.last[i]; ++s) ++crossing_[s];
      decompose_ = true;
    }
  }

  // Runs until a placement is found, the tree is exhausted, or `node_cap` nodes / the deadline are spent.
  SearchOutcome run(uint64_t node_cap, std::chrono::steady_clock::time_point deadline) {
    if (unplaced_.max_all() > cap_) return SearchOutcome::Infeasible;
    node_cap_ = node_cap;
    deadline_ = deadline;
    cands_.clear();
    return solve(0, static_cast<int>(g_.live_bytes.size()) - 1, n_, 0);
  }

  uint64_t nodes() const { return nodes_; }
  std::vector<uint64_t> offsets() const {
    std::vector<uint64_t> o(n_);
    for (int i = 0; i < n_; ++i) o[i] = static_cast<uint64_t>(solution_[i]);
    return o;
  }

 private:
  using Key = std::pair<int64_t, int>;  // (minimum offset, rank)
  struct Frame {
    size_t begin, next, end;  // this node's candidates in cands_
    size_t mark = 0;          // trail position before the current child's placement
    int placed = -1;          // the buffer placed for the current child
  };

  // The depth-first search over the buffers of the partition of sections [lo, hi] (`left` of them unplaced;
  // everything unplaced outside it is hidden from the candidate trees). The state is restored on return; the
  // offsets of a found placement are in solution_ (each placement writes its offset; the successful path
  // writes last).
  SearchOutcome solve(int lo, int hi, int left, int depth) {
    std::vector<Frame> stack;
    enter(stack, {0, 0}, left);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.placed >= 0) {  // back from a child that failed
        unplace(f.placed, f.mark);
        ++left;
        f.placed = -1;
      }
      if (left == 0) return unwind(stack, SearchOutcome::Found);
      bool descended = false;
      while (f.next < f.end) {
        const auto [at, r] = cands_[f.next++];
        const int c = by_rank_[r];
        // c's own sections, with c still counted in them: the same test as after placing (below), done first
        // because it is cheap and placing/unplacing costs a tree update per neighbour.
        if (at + unplaced_.max_range(g_.first[c], g_.last[c]) > cap_) continue;
        f.mark = trail_.size();
        place(c, at);
        --left;
        const int64_t top = at + static_cast<int64_t>(b_[c].size);
        if (at + unplaced_.max_range(lo, hi) <= cap_ && top + unplaced_.max_range(g_.first[c], g_.last[c]) <= cap_ &&
            unplaced_floors_fit()) {
          f.placed = c;
          if (nodes_ >= node_cap_ || ((nodes_ & 15) == 0 && std::chrono::steady_clock::now() >= deadline_))
            return unwind(stack, SearchOutcome::Stopped);
          ++nodes_;
          solution_[c] = at;
          if (left > 0 && decompose_ && depth < kMaxDepth) {
            std::vector<int> cuts = new_cuts(c);
            if (!cuts.empty()) {
              const SearchOutcome out = solve_split(lo, hi, cuts, depth);
              if (out != SearchOutcome::Infeasible) return unwind(stack, out);
              unplace(c, f.mark);
              ++left;
              f.placed = -1;
              continue;
            }
          }
          enter(stack, {at, r}, left);
          descended = true;
          break;
        }
        unplace(c, f.mark);
        ++left;
      }
      if (!descended) {
        cands_.resize(stack.back().begin);
        stack.pop_back();
      }
    }
    return SearchOutcome::Infeasible;
  }

  // Leaves the search with a Found or Stopped outcome. A Found part restores the state (the enclosing
  // decomposition may still fail in a later part and backtrack); Stopped ends the whole search, whose state is
  // then thrown away, so it skips the restore: on a deep path through a large instance that alone could take
  // longer than the time limit allows.
  SearchOutcome unwind(std::vector<Frame>& stack, SearchOutcome out) {
    if (out == SearchOutcome::Found)
      for (auto it = stack.rbegin(); it != stack.rend(); ++it)
        if (it->placed >= 0) unplace(it->placed, it->mark);
    cands_.resize(stack.front().begin);
    stack.clear();
    return out;
  }

  // Section boundaries inside c's lifetime that no unplaced buffer crosses any more (after placing c).
  std::vector<int> new_cuts(int c) const {
    std::vector<int> z;
    for (int s = g_.first[c]; s < g_.last[c]; ++s)
      if (crossing_[s] == 0) z.push_back(s);
    return z;
  }

  // MiniMalloc's dynamic decomposition: the parts of [lo, hi] between the new cuts share no unplaced buffer
  // and no section, so each is solved on its own (a failure in one is not retried through the others).
  SearchOutcome solve_split(int lo, int hi, const std::vector<int>& cuts, int depth) {
    std::vector<std::pair<int, int>> ranges;
    int from = lo;
    for (int z : cuts) {
      ranges.push_back({from, z});
      from = z + 1;
    }
    ranges.push_back({from, hi});
    std::vector<std::vector<int>> groups(ranges.size());
    for (size_t k = 0; k < ranges.size(); ++k)
      for (int s = ranges[k].first; s <= ranges[k].second; ++s)
        for (uint32_t j = starts_begin_[s]; j < starts_begin_[s + 1]; ++j)
          if (!placed_[starts_[j]]) groups[k].push_back(static_cast<int>(starts_[j]));
    for (const auto& grp : groups) show(grp, false);
    SearchOutcome out = SearchOutcome::Found;
    for (size_t k = 0; k < ranges.size() && out == SearchOutcome::Found; ++k) {
      if (groups[k].empty()) continue;
      show(groups[k], true);
      out = solve(ranges[k].first, ranges[k].second, static_cast<int>(groups[k].size()), depth + 1);
      show(groups[k], false);
    }
    for (const auto& grp : groups) show(grp, true);
    return out;
  }

  void show(const std::vector<int>& group, bool visible) {
    for (int d : group) {
      if (visible)
        tree_.set(rank_[d], min_off_[d], min_off_[d] + static_cast<int64_t>(b_[d].size));
      else
        tree_.set(rank_[d], RankMinTree::kNone, RankMinTree::kNone);
    }
  }

  // Pushes a node whose canonical floor is `floor`: its candidates are the unplaced buffers with key >= floor
  // and minimum offset below the lowest reachable top (dominance), in key order.
  void enter(std::vector<Frame>& stack, Key floor, int left) {
    const size_t begin = cands_.size();
    if (left > 0) {
      tree_.list_below(tree_.min_top(), cands_);
      auto keep = std::remove_if(cands_.begin() + static_cast<std::ptrdiff_t>(begin), cands_.end(),
                                 [&](const Key& k) { return k < floor; });
      cands_.erase(keep, cands_.end());
      std::sort(cands_.begin() + static_cast<std::ptrdiff_t>(begin), cands_.end());
    }
    stack.push_back({begin, begin, cands_.size()});
  }

  // MiniMalloc's "unallocated floor": in a section, nothing unplaced can go below the lowest minimum offset
  // among its unplaced buffers, so that plus the section's unplaced bytes must fit. Only the sections of the
  // buffers whose minimum offset just rose can have changed.
  bool unplaced_floors_fit() {
    if (members_begin_.empty()) return true;
    ++epoch_;
    for (int d : raised_) {
      for (int s = g_.first[d]; s <= g_.last[d]; ++s) {
        if (stamp_[s] == epoch_) continue;
        stamp_[s] = epoch_;
        int64_t lowest = RankMinTree::kNone;
        for (uint32_t k = members_begin_[s]; k < members_begin_[s + 1]; ++k) {
          const int u = static_cast<int>(members_[k]);
          if (!placed_[u]) lowest = std::min(lowest, min_off_[u]);
        }
        if (lowest != RankMinTree::kNone && lowest + unplaced_.max_range(s, s) > cap_) return false;
      }
    }
    return true;
  }

  void set_min_off(int d, int64_t v) {
    min_off_[d] = v;
    tree_.set(rank_[d], v, v + static_cast<int64_t>(b_[d].size));
  }

  void place(int c, int64_t at) {
    placed_[c] = 1;
    if (decompose_)
      for (int s = g_.first[c]; s < g_.last[c]; ++s) --crossing_[s];
    tree_.set(rank_[c], RankMinTree::kNone, RankMinTree::kNone);
    unplaced_.add(g_.first[c], g_.last[c], -static_cast<int64_t>(b_[c].size));
    const int64_t top = at + static_cast<int64_t>(b_[c].size);
    raised_.clear();
    for (uint64_t k = g_.begin[c]; k < g_.begin[c + 1]; ++k) {
      const int d = g_.adj[k];
      if (placed_[d] || min_off_[d] >= top) continue;
      trail_.push_back({d, min_off_[d]});
      raised_.push_back(d);
      set_min_off(d, top);
    }
  }

  void unplace(int c, size_t mark) {
    while (trail_.size() > mark) {
      set_min_off(trail_.back().first, trail_.back().second);
      trail_.pop_back();
    }
    placed_[c] = 0;
    if (decompose_)
      for (int s = g_.first[c]; s < g_.last[c]; ++s) ++crossing_[s];
    unplaced_.add(g_.first[c], g_.last[c], static_cast<int64_t>(b_[c].size));
    set_min_off(c, min_off_[c]);
  }

  const std::vector<DsaBuffer>& b_;
  const ConflictGraph& g_;
  int64_t cap_;
  int n_;
  std::vector<int> rank_, by_rank_;
  std::vector<int64_t> min_off_;
  std::vector<char> placed_;
  std::vector<int64_t> solution_;
  RankMinTree tree_;  // per rank: minimum offset and minimum offset + size (unplaced and visible only)
  SectionTree unplaced_;             // unplaced bytes per section
  std::vector<std::pair<int, int64_t>> trail_;  // (buffer, previous minimum offset)
  std::vector<Key> cands_;  // the candidates of every node on the current path, as a stack
  uint64_t nodes_ = 0, node_cap_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  static constexpr int kMaxDepth = 2000;  // nesting of decompositions (each is a C++ call frame)
  bool decompose_ = false;
  std::vector<uint32_t> starts_begin_, starts_;
  std::vector<int> crossing_;
  static constexpr uint64_t kMaxMembership = 4'000'000;
  std::vector<uint32_t> members_begin_, members_;  // unplaced-floor test: the buffers live in each section
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
  std::vector<int> raised_;  // buffers whose minimum offset the last placement raised
};

}  // namespace

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, const ConflictGraph& graph, uint64_t capacity,
                             const SearchLimits& limits, Preorder preorder) {
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
  // unlucky order (minimalloc I: found at LOAD in 12 s by jittered restarts, not in 55 s by the round robin).
  // A single order runs uncapped (within the limits), without jitter.
  const bool restarts = orders.size() > 1;
  uint64_t base_cap = restarts ? 2 * buffers.size() : UINT64_MAX / 4, jitter_cap = 2 * buffers.size();
  uint64_t base_nodes = 0, jitter_nodes = 0, base_round = 0, jitter_round = 0;
  for (;;) {
    const bool jitter = restarts && jitter_nodes < base_nodes;
    for (size_t j = 0; j < ranks.size(); ++j) {
      uint64_t allowed = jitter ? jitter_cap : base_cap;
      if (limits.node_limit) {
        if (r.nodes >= limits.node_limit) return r;
        allowed = std::min(allowed, limits.node_limit - r.nodes);
      }
      const std::vector<int> rank = jitter ? jitter_ranks(ranks[j], jitter_round * ranks.size() + j, kJitterWindows[jitter_round % 2]) : ranks[j];
      CanonicalSearch s(buffers, graph, cap, rank);
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
      ++base_round;
      base_cap *= 2;
    }
  }
}

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, uint64_t capacity, const SearchLimits& limits,
                             Preorder preorder) {
  const ConflictGraph g = build_conflict_graph(buffers, limits.deadline);
  if (!g.complete) return {};
  return search_capacity(buffers, g, capacity, limits, preorder);
}

}  // namespace dlsim
