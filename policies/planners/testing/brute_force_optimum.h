#pragma once
// The optimal height of a tiny instance by exhaustive enumeration of integer offsets below `limit`: the
// reference the exact search's tests compare with.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim::testing {

inline uint64_t brute_force_optimum(const std::vector<DsaBuffer>& b, uint64_t limit) {
  std::vector<uint64_t> off(b.size(), 0);
  uint64_t best = limit;
  std::function<void(size_t, uint64_t)> go = [&](size_t i, uint64_t h) {
    if (h >= best) return;
    if (i == b.size()) {
      best = h;
      return;
    }
    for (uint64_t o = 0; o + b[i].size <= best; ++o) {
      bool ok = true;
      for (size_t j = 0; j < i && ok; ++j)
        ok = !lifetimes_overlap(b[i], b[j]) || o + b[i].size <= off[j] || off[j] + b[j].size <= o;
      if (!ok) continue;
      off[i] = o;
      go(i + 1, std::max(h, o + b[i].size));
    }
  };
  go(0, 0);
  return best;
}

}  // namespace dlsim::testing
