#include "policies/planners/capacity_search.h"

#include <algorithm>
#include <numeric>
#include <bit>
#include <set>
#include <tuple>

#include "policies/planners/section_tree.h"

namespace dlsim {

namespace {

// The instance cut into sections, with each buffer's section range and its conflicting buffers.
struct Sections {
  std::vector<int> first, last;         // per buffer, inclusive section range
  std::vector<int64_t> live_bytes;      // per section
  std::vector<std::vector<int>> adj;    // conflicting buffers
};

Sections cut_sections(const std::vector<DsaBuffer>& b) {
  Sections s;
  std::vector<int64_t> points;
  for (const auto& x : b) {
    points.push_back(x.lower);
    points.push_back(x.upper);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  auto at = [&](int64_t t) { return static_cast<int>(std::lower_bound(points.begin(), points.end(), t) - points.begin()); };
  const int n_sections = std::max(0, static_cast<int>(points.size()) - 1);
  std::vector<int64_t> diff(n_sections + 1, 0);
  for (const auto& x : b) {
    s.first.push_back(at(x.lower));
    s.last.push_back(at(x.upper) - 1);
    diff[s.first.back()] += static_cast<int64_t>(x.size);
    diff[s.last.back() + 1] -= static_cast<int64_t>(x.size);
  }
  s.live_bytes.resize(n_sections);
  int64_t run = 0;
  for (int i = 0; i < n_sections; ++i) s.live_bytes[i] = run += diff[i];
  // Conflicts by a sweep in start order, keeping the buffers still live.
  std::vector<int> by_lower(b.size());
  std::iota(by_lower.begin(), by_lower.end(), 0);
  std::sort(by_lower.begin(), by_lower.end(), [&](int x, int y) { return b[x].lower < b[y].lower || (b[x].lower == b[y].lower && x < y); });
  s.adj.resize(b.size());
  std::vector<int> active;
  for (int i : by_lower) {
    std::erase_if(active, [&](int j) { return b[j].upper <= b[i].lower; });
    for (int j : active) {
      s.adj[i].push_back(j);
      s.adj[j].push_back(i);
    }
    active.push_back(i);
  }
  for (auto& a : s.adj) std::sort(a.begin(), a.end());
  return s;
}

// Static priority among equal candidates: a lower rank is tried first.
std::vector<int> priority_rank(const std::vector<DsaBuffer>& b, const Sections& s, TieOrder ties) {
  const int n = static_cast<int>(b.size());
  std::vector<int64_t> peak(n, 0);  // heaviest section the buffer lives in
  if (ties == TieOrder::SectionLoad) {
    // Sparse table for range maximum of live bytes.
    const int m = static_cast<int>(s.live_bytes.size());
    std::vector<std::vector<int64_t>> sp{s.live_bytes};
    for (int k = 1; (1 << k) <= m; ++k) {
      const auto& prev = sp.back();
      std::vector<int64_t> row(m - (1 << k) + 1);
      for (size_t i = 0; i < row.size(); ++i) row[i] = std::max(prev[i], prev[i + (1 << (k - 1))]);
      sp.push_back(std::move(row));
    }
    for (int i = 0; i < n; ++i) {
      const int len = s.last[i] - s.first[i] + 1;
      const int k = std::bit_width(static_cast<unsigned>(len)) - 1;
      peak[i] = std::max(sp[k][s.first[i]], sp[k][s.last[i] - (1 << k) + 1]);
    }
  }
  auto area = [&](int i) { return static_cast<unsigned __int128>(b[i].size) * static_cast<uint64_t>(b[i].upper - b[i].lower); };
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) {
    switch (ties) {
      case TieOrder::SectionLoad:
        if (peak[x] != peak[y]) return peak[x] > peak[y];
        break;
      case TieOrder::Size:
        if (b[x].size != b[y].size) return b[x].size > b[y].size;
        break;
      case TieOrder::Length:
        if (b[x].upper - b[x].lower != b[y].upper - b[y].lower) return b[x].upper - b[x].lower > b[y].upper - b[y].lower;
        break;
      case TieOrder::Area:
        break;
    }
    if (area(x) != area(y)) return area(x) > area(y);
    return x < y;
  });
  std::vector<int> rank(n);
  for (int r = 0; r < n; ++r) rank[order[r]] = r;
  return rank;
}

class Search {
 public:
  Search(const std::vector<DsaBuffer>& b, uint64_t capacity, const SearchLimits& limits, TieOrder ties)
      : b_(b), cap_(static_cast<int64_t>(capacity)), limits_(limits), s_(cut_sections(b)),
        rank_(priority_rank(b, s_, ties)), unplaced_bytes_(s_.live_bytes) {
    const int n = static_cast<int>(b.size());
    cand_.assign(n, 0);
    min_allowed_.assign(n, 0);
    placed_.assign(n, false);
    offset_.assign(n, 0);
    unplaced_neighbours_.resize(n);
    for (int i = 0; i < n; ++i) {
      unplaced_neighbours_[i] = static_cast<int>(s_.adj[i].size());
      open_.insert({0, rank_[i], i});
    }
    unplaced_ = n;
  }

  SearchResult run() {
    SearchResult r;
    r.outcome = explore();
    r.nodes = nodes_;
    if (r.outcome == SearchOutcome::Found) r.offsets.assign(offset_.begin(), offset_.end());
    return r;
  }

 private:
  // The open set: unplaced buffers allowed at their current candidate, by (candidate, rank).
  using Key = std::tuple<int64_t, int, int>;
  bool is_open(int d) const { return !placed_[d] && cand_[d] >= min_allowed_[d]; }
  void close(int d) {
    if (is_open(d)) open_.erase({cand_[d], rank_[d], d});
  }
  void reopen(int d) {
    if (is_open(d)) open_.insert({cand_[d], rank_[d], d});
  }

  enum class Change : uint8_t { Cand, MinAllowed, Placed, Neighbours };
  struct Undo {
    Change what;
    int index;
    int64_t old;
  };

  void set_cand(int d, int64_t v) {
    close(d);
    trail_.push_back({Change::Cand, d, cand_[d]});
    cand_[d] = v;
    reopen(d);
  }

  void place(int c, int64_t at) {
    close(c);
    trail_.push_back({Change::Placed, c, 0});
    placed_[c] = true;
    offset_[c] = static_cast<uint64_t>(at);
    --unplaced_;
    unplaced_bytes_.add(s_.first[c], s_.last[c], -static_cast<int64_t>(b_[c].size));
    const int64_t top = at + static_cast<int64_t>(b_[c].size);
    for (int d : s_.adj[c]) {
      if (placed_[d]) continue;
      trail_.push_back({Change::Neighbours, d, 0});
      --unplaced_neighbours_[d];
      if (cand_[d] < top) set_cand(d, top);
    }
  }

  void forbid(int c, int64_t at) {
    close(c);
    trail_.push_back({Change::MinAllowed, c, min_allowed_[c]});
    min_allowed_[c] = at + 1;
  }

  void undo_to(size_t mark) {
    while (trail_.size() > mark) {
      const Undo u = trail_.back();
      trail_.pop_back();
      const int d = u.index;
      switch (u.what) {
        case Change::Cand:
          close(d);
          cand_[d] = u.old;
          reopen(d);
          break;
        case Change::MinAllowed:
          close(d);
          min_allowed_[d] = u.old;
          reopen(d);
          break;
        case Change::Neighbours:
          ++unplaced_neighbours_[d];
          break;
        case Change::Placed:
          placed_[d] = false;
          ++unplaced_;
          unplaced_bytes_.add(s_.first[d], s_.last[d], static_cast<int64_t>(b_[d].size));
          reopen(d);
          break;
      }
    }
  }

  // Branch 2 leaves c's place at `at` to others. A section of c with no slack left (everything unplaced in it
  // must stack from `at` exactly) then needs another open buffer starting at `at` that covers it; without one,
  // some bytes above `at` in that section stay empty and the capacity is exceeded.
  bool others_can_fill(int c, int64_t at) {
    const int64_t tight = cap_ - at;  // unplaced bytes of a section with zero slack
    if (unplaced_bytes_.max_range(s_.first[c], s_.last[c]) < tight) return true;
    cover_.clear();
    for (auto it = open_.begin(); it != open_.end() && std::get<0>(*it) == at; ++it) {
      const int e = std::get<2>(*it);
      if (e == c || s_.last[e] < s_.first[c] || s_.first[e] > s_.last[c]) continue;
      cover_.push_back({std::max(s_.first[e], s_.first[c]), std::min(s_.last[e], s_.last[c])});
    }
    std::sort(cover_.begin(), cover_.end());
    int next = s_.first[c];  // first section not yet known to be covered
    for (const auto& [a, z] : cover_) {
      if (a > next && unplaced_bytes_.max_range(next, a - 1) >= tight) return false;
      next = std::max(next, z + 1);
    }
    return next > s_.last[c] || unplaced_bytes_.max_range(next, s_.last[c]) < tight;
  }

  bool out_of_budget() {
    if (limits_.node_limit && nodes_ >= limits_.node_limit) return true;
    if ((nodes_ & 1023) == 0 && std::chrono::steady_clock::now() >= limits_.deadline) return true;
    return false;
  }

  // Depth-first search with an explicit stack (paths can be as long as twice the number of buffers).
  SearchOutcome explore() {
    struct Frame {
      int c = -1;
      int64_t at = 0;
      int stage = 0;  // 0: entering, 1: back from "place c", 2: back from "forbid c"
      size_t mark = 0;
    };
    std::vector<Frame> stack(1);
    while (!stack.empty()) {
      Frame& f = stack.back();
      if (f.stage == 0) {
        if (out_of_budget()) return SearchOutcome::Stopped;
        ++nodes_;
        if (unplaced_ == 0) return SearchOutcome::Found;
        if (open_.empty()) {  // unplaced buffers remain but none can be placed tightly any more
          stack.pop_back();
          continue;
        }
        const auto [cand, rank, c] = *open_.begin();
        if (cand + unplaced_bytes_.max_all() > cap_) {
          stack.pop_back();
          continue;
        }
        f.c = c;
        f.at = cand;
        f.stage = 1;
        f.mark = trail_.size();
        place(c, cand);
        stack.push_back(Frame{});
      } else if (f.stage == 1) {
        undo_to(f.mark);
        f.stage = 2;
        if (unplaced_neighbours_[f.c] > 0 && others_can_fill(f.c, f.at)) {
          forbid(f.c, f.at);
          stack.push_back(Frame{});
        } else {
          stack.pop_back();
        }
      } else {
        undo_to(f.mark);
        stack.pop_back();
      }
    }
    return SearchOutcome::Infeasible;
  }

  const std::vector<DsaBuffer>& b_;
  int64_t cap_;
  SearchLimits limits_;
  Sections s_;
  std::vector<int> rank_;
  SectionTree unplaced_bytes_;
  std::vector<int64_t> cand_, min_allowed_;
  std::vector<bool> placed_;
  std::vector<uint64_t> offset_;
  std::vector<int> unplaced_neighbours_;
  std::set<Key> open_;
  std::vector<Undo> trail_;
  std::vector<std::pair<int, int>> cover_;  // scratch for others_can_fill
  int unplaced_ = 0;
  uint64_t nodes_ = 0;
};

}  // namespace

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, uint64_t capacity, const SearchLimits& limits,
                             TieOrder ties) {
  if (buffers.empty()) return {SearchOutcome::Found, {}, 0};
  Search s(buffers, capacity, limits, ties);
  return s.run();
}

}  // namespace dlsim
