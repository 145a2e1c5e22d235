#include "policies/planners/canonical_search.h"

#include <algorithm>
#include <numeric>

namespace dlsim {

CanonicalSearch::CanonicalSearch(const std::vector<DsaBuffer>& b, const ConflictGraph& g, int64_t capacity,
                                 std::vector<int> rank, Preorder order, const SearchRules& rules, int jitter_window,
                                 uint64_t seed)
    : b_(b), g_(g), cap_(capacity), n_(static_cast<int>(b.size())), rules_(rules), letters_(preorder_letters(order)),
      jitter_window_(jitter_window), jitter_seed_(seed), rank_(std::move(rank)), by_rank_(n_), min_off_(n_, 0),
      placed_(n_, 0), solution_(n_, 0), tree_(n_), unplaced_(g.live_bytes) {
  for (int i = 0; i < n_; ++i) {
    by_rank_[rank_[i]] = i;
    tree_.set(rank_[i], 0, static_cast<int64_t>(b[i].size));
  }
  uint64_t span = 0;
  for (int i = 0; i < n_; ++i) span += static_cast<uint64_t>(g.last[i] - g.first[i] + 1);
  if (span > kMaxMembership) return;
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
  starts_begin_.assign(sections + 1, 0);
  for (int i = 0; i < n_; ++i) ++starts_begin_[g.first[i] + 1];
  for (size_t s = 0; s < sections; ++s) starts_begin_[s + 1] += starts_begin_[s];
  starts_.resize(n_);
  std::vector<uint32_t> at(starts_begin_.begin(), starts_begin_.end() - 1);
  for (int i = 0; i < n_; ++i) starts_[at[g.first[i]]++] = static_cast<uint32_t>(i);
  crossing_.assign(sections, 0);
  for (int i = 0; i < n_; ++i)
    for (int s = g.first[i]; s < g.last[i]; ++s) ++crossing_[s];
  section_unplaced_ = g.live_bytes;
  part_total_.assign(n_, 0);
  decompose_ = true;
}

SearchOutcome CanonicalSearch::run(uint64_t node_cap, std::chrono::steady_clock::time_point deadline) {
  if (unplaced_.max_all() > cap_) return SearchOutcome::Infeasible;
  node_cap_ = node_cap;
  deadline_ = deadline;
  cands_.clear();
  return solve(0, static_cast<int>(g_.live_bytes.size()) - 1, n_, 0);
}

std::vector<uint64_t> CanonicalSearch::offsets() const {
  std::vector<uint64_t> o(n_);
  for (int i = 0; i < n_; ++i) o[i] = static_cast<uint64_t>(solution_[i]);
  return o;
}

// The depth-first search over the buffers of the partition of sections [lo, hi] (`left` of them unplaced;
// everything unplaced outside it is hidden from the candidate trees). The state is restored on return; the
// offsets of a found placement are in solution_ (each placement writes its offset; the successful path
// writes last).
SearchOutcome CanonicalSearch::solve(int lo, int hi, int left, int depth) {
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
      // c's own sections, with c still counted in them: everything there must stack from `at` (the same
      // test as after placing c with its top instead), done first because it is cheap and placing/unplacing
      // costs a tree update per neighbour.
      if (at + unplaced_.max_range(g_.first[c], g_.last[c]) > cap_) continue;
      f.mark = trail_.size();
      place(c, at);
      --left;
      const int64_t top = at + static_cast<int64_t>(b_[c].size);
      if (at + unplaced_.max_range(lo, hi) <= cap_ && unplaced_floors_fit(top)) {
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
SearchOutcome CanonicalSearch::unwind(std::vector<Frame>& stack, SearchOutcome out) {
  if (out == SearchOutcome::Found)
    for (auto it = stack.rbegin(); it != stack.rend(); ++it)
      if (it->placed >= 0) unplace(it->placed, it->mark);
  cands_.resize(stack.front().begin);
  stack.clear();
  return out;
}

// Section boundaries inside c's lifetime that no unplaced buffer crosses any more (after placing c).
std::vector<int> CanonicalSearch::new_cuts(int c) const {
  std::vector<int> z;
  for (int s = g_.first[c]; s < g_.last[c]; ++s)
    if (crossing_[s] == 0) z.push_back(s);
  return z;
}

// MiniMalloc's dynamic decomposition: the parts of [lo, hi] between the new cuts share no unplaced buffer
// and no section, so each is solved on its own (a failure in one is not retried through the others).
SearchOutcome CanonicalSearch::solve_split(int lo, int hi, const std::vector<int>& cuts, int depth) {
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
    const size_t mark = rerank(groups[k]);
    show(groups[k], true);
    out = solve(ranges[k].first, ranges[k].second, static_cast<int>(groups[k].size()), depth + 1);
    show(groups[k], false);
    restore_ranks(mark);
  }
  for (const auto& grp : groups) show(grp, true);
  return out;
}

// MiniMalloc's preorder of a part: each part of a decomposition is ordered afresh, T taken over the bytes
// still unplaced, so the buffers of the part's most crowded remaining sections come first (the root's T
// would keep ranking by sections that placed buffers have since emptied: minimalloc I in the TWA order alone
// is found after 1,791 nodes so, and not within 1,000,000 without). The part's buffers take the rank slots they held,
// in the new order, so the other parts' ranks stay put. Returns the mark restore_ranks undoes it to.
size_t CanonicalSearch::rerank(const std::vector<int>& group) {
  const size_t mark = rank_trail_.size();
  if (!rules_.part_preorder) return mark;
  std::vector<int> slots, ids = group;
  for (int d : group) {
    slots.push_back(rank_[d]);
    rank_trail_.push_back({d, rank_[d]});
    int64_t t = 0;
    for (int s = g_.first[d]; s <= g_.last[d]; ++s) t = std::max(t, section_unplaced_[s]);
    part_total_[d] = t;
  }
  std::sort(slots.begin(), slots.end());
  sort_by_preorder(ids, b_, part_total_, letters_);
  if (jitter_window_ > 1) {  // a jittered restart perturbs each part's order as it does the root's
    std::vector<int> position(ids.size());
    std::iota(position.begin(), position.end(), 0);
    position = jitter_ranks(position, jitter_seed_ * 1'000'003 + reranks_++, jitter_window_);
    std::vector<int> moved(ids.size());
    for (size_t k = 0; k < ids.size(); ++k) moved[position[k]] = ids[k];
    ids = std::move(moved);
  }
  for (size_t k = 0; k < ids.size(); ++k) {
    rank_[ids[k]] = slots[k];
    by_rank_[slots[k]] = ids[k];
  }
  return mark;
}

void CanonicalSearch::restore_ranks(size_t mark) {
  while (rank_trail_.size() > mark) {
    const auto [d, r] = rank_trail_.back();
    rank_trail_.pop_back();
    rank_[d] = r;
    by_rank_[r] = d;
  }
}

void CanonicalSearch::show(const std::vector<int>& group, bool visible) {
  for (int d : group) {
    if (visible)
      tree_.set(rank_[d], min_off_[d], min_off_[d] + static_cast<int64_t>(b_[d].size));
    else
      tree_.set(rank_[d], RankMinTree::kNone, RankMinTree::kNone);
  }
}

// Pushes a node whose canonical floor is `floor`: its candidates are the unplaced buffers with key >= floor
// and minimum offset below the lowest reachable top (dominance), in key order.
void CanonicalSearch::enter(std::vector<Frame>& stack, Key floor, int left) {
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

// Two tests on the sections of the buffers whose minimum offset the placement just raised to `top` (no other
// section's unplaced buffers moved):
// * MiniMalloc's unallocated floor: nothing unplaced in a section can go below the lowest minimum offset
//   among its unplaced buffers, so that plus the section's unplaced bytes must fit.
// * The raised stack (ours): the unplaced buffers of the section with minimum offset >= top all go at or
//   above top, so their bytes must fit between top and the capacity. The floor test misses this where a
//   lower buffer in the section still has room below (minimalloc A: 42,520 nodes instead of 175,548).
// A raised buffer sits at top in each of its sections, so the lowest minimum offset there is at most top and
// both tests pass wherever top plus the section's unplaced bytes fits: those sections are not scanned.
bool CanonicalSearch::unplaced_floors_fit(int64_t top) {
  if (members_begin_.empty()) return true;
  ++epoch_;
  for (int d : raised_) {
    for (int s = g_.first[d]; s <= g_.last[d]; ++s) {
      if (stamp_[s] == epoch_) continue;
      stamp_[s] = epoch_;
      if (top + section_unplaced_[s] <= cap_) continue;
      int64_t lowest = RankMinTree::kNone, above = 0;
      for (uint32_t k = members_begin_[s]; k < members_begin_[s + 1]; ++k) {
        const int u = static_cast<int>(members_[k]);
        if (placed_[u]) continue;
        lowest = std::min(lowest, min_off_[u]);
        if (min_off_[u] >= top) above += static_cast<int64_t>(b_[u].size);
      }
      if (lowest != RankMinTree::kNone && lowest + section_unplaced_[s] > cap_) return false;
      if (rules_.raised_stack && top + above > cap_) return false;
    }
  }
  return true;
}

void CanonicalSearch::set_min_off(int d, int64_t v) {
  min_off_[d] = v;
  tree_.set(rank_[d], v, v + static_cast<int64_t>(b_[d].size));
}

void CanonicalSearch::place(int c, int64_t at) {
  placed_[c] = 1;
  const int64_t size = static_cast<int64_t>(b_[c].size);
  if (decompose_) {
    for (int s = g_.first[c]; s < g_.last[c]; ++s) --crossing_[s];
    for (int s = g_.first[c]; s <= g_.last[c]; ++s) section_unplaced_[s] -= size;
  }
  tree_.set(rank_[c], RankMinTree::kNone, RankMinTree::kNone);
  unplaced_.add(g_.first[c], g_.last[c], -size);
  const int64_t top = at + size;
  raised_.clear();
  for (uint64_t k = g_.begin[c]; k < g_.begin[c + 1]; ++k) {
    const int d = g_.adj[k];
    if (placed_[d] || min_off_[d] >= top) continue;
    trail_.push_back({d, min_off_[d]});
    raised_.push_back(d);
    set_min_off(d, top);
  }
}

void CanonicalSearch::unplace(int c, size_t mark) {
  while (trail_.size() > mark) {
    set_min_off(trail_.back().first, trail_.back().second);
    trail_.pop_back();
  }
  placed_[c] = 0;
  const int64_t size = static_cast<int64_t>(b_[c].size);
  if (decompose_) {
    for (int s = g_.first[c]; s < g_.last[c]; ++s) ++crossing_[s];
    for (int s = g_.first[c]; s <= g_.last[c]; ++s) section_unplaced_[s] += size;
  }
  unplaced_.add(g_.first[c], g_.last[c], size);
  set_min_off(c, min_off_[c]);
}

}  // namespace dlsim
