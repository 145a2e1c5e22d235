#include "policies/planners/lifetime_index.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dlsim {

namespace {
constexpr int64_t kNone = std::numeric_limits<int64_t>::min();

void fenwick_add(std::vector<uint32_t>& f, size_t pos) {
  for (size_t i = pos + 1; i <= f.size(); i += i & (~i + 1)) ++f[i - 1];
}
size_t fenwick_prefix(const std::vector<uint32_t>& f, size_t end) {  // sum over positions [0, end)
  size_t s = 0;
  for (size_t i = end; i > 0; i -= i & (~i + 1)) s += f[i - 1];
  return s;
}
}  // namespace

LifetimeIndex::LifetimeIndex(const std::vector<DsaBuffer>& buffers) : buffers_(buffers) {
  by_lower_.resize(buffers.size());
  std::iota(by_lower_.begin(), by_lower_.end(), size_t{0});
  std::sort(by_lower_.begin(), by_lower_.end(), [&](size_t a, size_t b) {
    return buffers[a].lower < buffers[b].lower || (buffers[a].lower == buffers[b].lower && a < b);
  });
  lowers_.reserve(buffers.size());
  rank_.resize(buffers.size());
  for (size_t r = 0; r < by_lower_.size(); ++r) {
    lowers_.push_back(buffers[by_lower_[r]].lower);
    rank_[by_lower_[r]] = r;
  }
  while (leaves_ < buffers.size()) leaves_ *= 2;
  max_upper_.assign(2 * leaves_, kNone);
  std::vector<size_t> by_upper(buffers.size());
  std::iota(by_upper.begin(), by_upper.end(), size_t{0});
  std::sort(by_upper.begin(), by_upper.end(), [&](size_t a, size_t b) {
    return buffers[a].upper < buffers[b].upper || (buffers[a].upper == buffers[b].upper && a < b);
  });
  upper_rank_.resize(buffers.size());
  for (size_t r = 0; r < by_upper.size(); ++r) {
    uppers_.push_back(buffers[by_upper[r]].upper);
    upper_rank_[by_upper[r]] = r;
  }
  placed_by_lower_.assign(buffers.size(), 0);
  placed_by_upper_.assign(buffers.size(), 0);
}

size_t LifetimeIndex::count_conflicts(const DsaBuffer& b) const {
  const auto starts_before_end = static_cast<size_t>(std::lower_bound(lowers_.begin(), lowers_.end(), b.upper) - lowers_.begin());
  const auto ends_by_start = static_cast<size_t>(std::upper_bound(uppers_.begin(), uppers_.end(), b.lower) - uppers_.begin());
  // Every placed buffer ending by b's start also starts before b's end (lower < upper).
  return fenwick_prefix(placed_by_lower_, starts_before_end) - fenwick_prefix(placed_by_upper_, ends_by_start);
}

void LifetimeIndex::place(size_t buffer) {
  fenwick_add(placed_by_lower_, rank_[buffer]);
  fenwick_add(placed_by_upper_, upper_rank_[buffer]);
  size_t k = rank_[buffer] + leaves_;
  max_upper_[k] = buffers_[buffer].upper;
  for (k /= 2; k >= 1; k /= 2) {
    const int64_t m = std::max(max_upper_[2 * k], max_upper_[2 * k + 1]);
    if (max_upper_[k] == m) break;  // nothing above changes
    max_upper_[k] = m;
  }
}

void LifetimeIndex::conflicts(const DsaBuffer& b, std::vector<size_t>& out) const {
  // Placed buffers with lower < b.upper (a prefix by lower) and upper > b.lower.
  const size_t end = static_cast<size_t>(std::lower_bound(lowers_.begin(), lowers_.end(), b.upper) - lowers_.begin());
  if (end > 0) collect(1, 0, leaves_, end, b.lower, out);
}

void LifetimeIndex::collect(size_t node, size_t node_lo, size_t node_hi, size_t end, int64_t lower,
                            std::vector<size_t>& out) const {
  if (node_lo >= end || max_upper_[node] <= lower) return;
  if (node >= leaves_) {
    out.push_back(by_lower_[node - leaves_]);
    return;
  }
  const size_t mid = (node_lo + node_hi) / 2;
  collect(2 * node, node_lo, mid, end, lower, out);
  collect(2 * node + 1, mid, node_hi, end, lower, out);
}

}  // namespace dlsim
