#include "policies/planners/gap_placer.h"

#include <algorithm>
#include <limits>

namespace dlsim {

uint64_t best_fit_offset(const std::vector<PlacedRange>& occupied, uint64_t size) {
  uint64_t running_end = 0;  // the highest end seen so far in offset order
  uint64_t best = 0, best_gap = std::numeric_limits<uint64_t>::max();
  bool found = false;
  for (const auto& r : occupied) {
    if (r.offset > running_end) {
      const uint64_t gap = r.offset - running_end;
      if (gap >= size && gap < best_gap) {
        best_gap = gap;
        best = running_end;
        found = true;
      }
    }
    running_end = std::max(running_end, r.end);
  }
  return found ? best : running_end;
}

}  // namespace dlsim
