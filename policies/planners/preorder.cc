#include "policies/planners/preorder.h"

#include <algorithm>
#include <numeric>

#include "policies/planners/section_tree.h"

namespace dlsim {

const char* preorder_letters(Preorder order) {
  return order == Preorder::TotalAreaWidth ? "TAW" : order == Preorder::TotalWidthArea ? "TWA" : "WAT";
}

void sort_by_preorder(std::vector<int>& ids, const std::vector<DsaBuffer>& b, const std::vector<int64_t>& total,
                      const char* letters) {
  auto key = [&](int i, char c) -> unsigned __int128 {
    const uint64_t width = static_cast<uint64_t>(b[i].upper - b[i].lower);
    if (c == 'W') return width;
    if (c == 'T') return static_cast<uint64_t>(total[i]);
    return static_cast<unsigned __int128>(b[i].size) * width;
  };
  std::sort(ids.begin(), ids.end(), [&](int x, int y) {
    for (const char* c = letters; *c; ++c)
      if (key(x, *c) != key(y, *c)) return key(x, *c) > key(y, *c);
    return x < y;
  });
}

std::vector<int> priority_rank(const std::vector<DsaBuffer>& b, const ConflictGraph& g, Preorder order) {
  const int n = static_cast<int>(b.size());
  const SectionTree live(g.live_bytes);
  std::vector<int64_t> total(n);
  for (int i = 0; i < n; ++i) total[i] = live.max_range(g.first[i], g.last[i]);
  std::vector<int> by(n);
  std::iota(by.begin(), by.end(), 0);
  sort_by_preorder(by, b, total, preorder_letters(order));
  std::vector<int> rank(n);
  for (int r = 0; r < n; ++r) rank[by[r]] = r;
  return rank;
}

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

}  // namespace dlsim
