#include "policies/planners/conflict_graph.h"

#include <algorithm>
#include <numeric>

namespace dlsim {

ConflictGraph build_conflict_graph(const std::vector<DsaBuffer>& b, std::chrono::steady_clock::time_point deadline) {
  ConflictGraph g;
  const int n = static_cast<int>(b.size());
  const TimePoints tp(b);
  auto at = [&](int64_t t) { return tp.index(t); };
  const int n_sections = tp.sections();
  std::vector<int64_t> diff(n_sections + 1, 0);
  g.first.resize(n);
  g.last.resize(n);
  for (int i = 0; i < n; ++i) {
    g.first[i] = at(b[i].lower);
    g.last[i] = at(b[i].upper) - 1;
    diff[g.first[i]] += static_cast<int64_t>(b[i].size);
    diff[g.last[i] + 1] -= static_cast<int64_t>(b[i].size);
  }
  g.live_bytes.resize(n_sections);
  int64_t run = 0;
  for (int s = 0; s < n_sections; ++s) g.live_bytes[s] = run += diff[s];

  // Two sweeps in start order over the live set: the first counts each buffer's neighbours, the second fills.
  std::vector<int> by_lower(n);
  std::iota(by_lower.begin(), by_lower.end(), 0);
  std::sort(by_lower.begin(), by_lower.end(),
            [&](int x, int y) { return g.first[x] < g.first[y] || (g.first[x] == g.first[y] && x < y); });
  std::vector<uint64_t> degree(n, 0);
  std::vector<int> active;
  auto sweep = [&](auto&& on_pair) {
    active.clear();
    for (int k = 0; k < n; ++k) {
      const int i = by_lower[k];
      if ((k & 2047) == 0 && std::chrono::steady_clock::now() >= deadline) return false;
      std::erase_if(active, [&](int j) { return g.last[j] < g.first[i]; });
      for (int j : active) on_pair(i, j);
      active.push_back(i);
    }
    return true;
  };
  if (!sweep([&](int i, int j) { ++degree[i], ++degree[j]; })) return g;
  g.begin.assign(n + 1, 0);
  for (int i = 0; i < n; ++i) g.begin[i + 1] = g.begin[i] + degree[i];
  g.adj.resize(g.begin[n]);
  std::vector<uint64_t> fill(g.begin.begin(), g.begin.end() - 1);
  if (!sweep([&](int i, int j) {
        g.adj[fill[i]++] = j;
        g.adj[fill[j]++] = i;
      }))
    return g;
  g.complete = true;
  return g;
}

}  // namespace dlsim
