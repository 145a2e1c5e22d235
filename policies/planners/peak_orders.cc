#include "policies/planners/peak_orders.h"

#include <algorithm>
#include <numeric>

#include "policies/planners/section_tree.h"

namespace dlsim {

std::vector<uint64_t> buffer_peaks(const std::vector<DsaBuffer>& b) {
  const TimePoints tp(b);
  auto at = [&](int64_t t) { return tp.index(t); };
  const int sections = tp.sections();
  std::vector<int64_t> diff(sections + 1, 0), live(sections, 0);
  for (const auto& x : b) {
    diff[at(x.lower)] += static_cast<int64_t>(x.size);
    diff[at(x.upper)] -= static_cast<int64_t>(x.size);
  }
  int64_t run = 0;
  for (int s = 0; s < sections; ++s) live[s] = run += diff[s];
  const SectionTree tree(live);
  std::vector<uint64_t> peak(b.size(), 0);
  for (size_t i = 0; i < b.size(); ++i)
    if (b[i].upper > b[i].lower) peak[i] = static_cast<uint64_t>(tree.max_range(at(b[i].lower), at(b[i].upper) - 1));
  return peak;
}

std::vector<size_t> peak_order(const std::vector<DsaBuffer>& b, const std::vector<uint64_t>& peak, PeakOrder order) {
  std::vector<size_t> idx(b.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  auto width = [&](size_t i) { return b[i].upper - b[i].lower; };
  std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
    if (peak[x] != peak[y]) return peak[x] > peak[y];
    if (order == PeakOrder::PeakThenWidth && width(x) != width(y)) return width(x) > width(y);
    if (b[x].size != b[y].size) return b[x].size > b[y].size;
    return x < y;
  });
  return idx;
}

std::vector<size_t> promote_above(const std::vector<DsaBuffer>& b, const std::vector<size_t>& order,
                                  const std::vector<uint64_t>& offsets, uint64_t level) {
  std::vector<size_t> hot, cold;
  for (size_t i : order) (offsets[i] + b[i].size > level ? hot : cold).push_back(i);
  hot.insert(hot.end(), cold.begin(), cold.end());
  return hot;
}

}  // namespace dlsim
