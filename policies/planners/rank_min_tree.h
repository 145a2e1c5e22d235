#pragma once
// A minimum over a fixed array of values indexed 0..n-1 (the search's buffers by priority rank), with point
// updates and an in-order listing of every index whose value is below a threshold. Iterative and flat, because
// the capacity search updates it once per conflicting buffer on every placement (millions of times).
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
    v_.assign(2 * static_cast<size_t>(size_), kNone);
  }
  void set(int i, int64_t value) {
    size_t k = static_cast<size_t>(i) + size_;
    v_[k] = value;
    for (k /= 2; k >= 1; k /= 2) {
      const int64_t m = std::min(v_[2 * k], v_[2 * k + 1]);
      if (v_[k] == m) break;  // nothing above changes
      v_[k] = m;
    }
  }
  int64_t get(int i) const { return v_[static_cast<size_t>(i) + size_]; }
  int64_t min() const { return v_[1]; }
  // Appends (value, index) for every index with value < bound, in index order.
  template <class Out>
  void list_below(int64_t bound, Out& out) const {
    if (v_[1] >= bound) return;
    list(1, bound, out);
  }

 private:
  template <class Out>
  void list(size_t k, int64_t bound, Out& out) const {
    if (k >= static_cast<size_t>(size_)) {
      out.push_back({v_[k], static_cast<int>(k - size_)});
      return;
    }
    if (v_[2 * k] < bound) list(2 * k, bound, out);
    if (v_[2 * k + 1] < bound) list(2 * k + 1, bound, out);
  }
  int size_;
  std::vector<int64_t> v_;
};

}  // namespace dlsim
