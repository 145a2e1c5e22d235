#pragma once
// Two minima over a fixed array of (offset, top) pairs indexed 0..n-1 (the search's unplaced buffers by
// priority rank: minimum offset, and minimum offset + size), with point updates, the minimum top, and an
// in-order listing of every index whose offset is below a threshold. One tree holds both values so that an
// update walks one path: the capacity search updates it once per conflicting buffer on every placement
// (millions of times), and that walk is the search's main cost.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace dlsim {

class RankMinTree {
 public:
  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

  explicit RankMinTree(int n) : size_(1) {
    while (size_ < std::max(n, 1)) size_ *= 2;
    v_.assign(2 * static_cast<size_t>(size_), {kNone, kNone});
  }
  // kNone for both hides index i.
  void set(int i, int64_t offset, int64_t top) {
    size_t k = static_cast<size_t>(i) + size_;
    v_[k] = {offset, top};
    for (k /= 2; k >= 1; k /= 2) {
      const Node m{std::min(v_[2 * k].offset, v_[2 * k + 1].offset), std::min(v_[2 * k].top, v_[2 * k + 1].top)};
      if (v_[k].offset == m.offset && v_[k].top == m.top) break;  // nothing above changes
      v_[k] = m;
    }
  }
  int64_t offset(int i) const { return v_[static_cast<size_t>(i) + size_].offset; }
  int64_t min_top() const { return v_[1].top; }
  // Appends (offset, index) for every index with offset < bound, in index order.
  template <class Out>
  void list_below(int64_t bound, Out& out) const {
    if (v_[1].offset >= bound) return;
    list(1, bound, out);
  }

 private:
  struct Node {
    int64_t offset, top;
  };
  template <class Out>
  void list(size_t k, int64_t bound, Out& out) const {
    if (k >= static_cast<size_t>(size_)) {
      out.push_back({v_[k].offset, static_cast<int>(k - size_)});
      return;
    }
    if (v_[2 * k].offset < bound) list(2 * k, bound, out);
    if (v_[2 * k + 1].offset < bound) list(2 * k + 1, bound, out);
  }
  int size_;
  std::vector<Node> v_;
};

}  // namespace dlsim
