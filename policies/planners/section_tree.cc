#include "policies/planners/section_tree.h"

#include <algorithm>
#include <limits>

namespace dlsim {

SectionTree::SectionTree(const std::vector<int64_t>& values) : n_(static_cast<int>(values.size())) {
  max_.assign(4 * std::max(n_, 1), 0);
  add_.assign(4 * std::max(n_, 1), 0);
  if (n_ > 0) build(1, 0, n_ - 1, values);
}

void SectionTree::build(int node, int lo, int hi, const std::vector<int64_t>& v) {
  if (lo == hi) {
    max_[node] = v[lo];
    return;
  }
  const int mid = (lo + hi) / 2;
  build(2 * node, lo, mid, v);
  build(2 * node + 1, mid + 1, hi, v);
  max_[node] = std::max(max_[2 * node], max_[2 * node + 1]);
}

void SectionTree::add(int first, int last, int64_t delta) { update(1, 0, n_ - 1, first, last, delta); }

void SectionTree::update(int node, int lo, int hi, int a, int b, int64_t d) {
  if (b < lo || hi < a) return;
  if (a <= lo && hi <= b) {
    max_[node] += d;
    add_[node] += d;
    return;
  }
  const int mid = (lo + hi) / 2;
  update(2 * node, lo, mid, a, b, d);
  update(2 * node + 1, mid + 1, hi, a, b, d);
  max_[node] = std::max(max_[2 * node], max_[2 * node + 1]) + add_[node];
}

int64_t SectionTree::query(int node, int lo, int hi, int a, int b) const {
  if (b < lo || hi < a) return std::numeric_limits<int64_t>::min();
  if (a <= lo && hi <= b) return max_[node];
  const int mid = (lo + hi) / 2;
  const int64_t m = std::max(query(2 * node, lo, mid, a, b), query(2 * node + 1, mid + 1, hi, a, b));
  return m == std::numeric_limits<int64_t>::min() ? m : m + add_[node];
}

}  // namespace dlsim
