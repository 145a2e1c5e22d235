#include "policies/planners/load.h"

#include <algorithm>
#include <utility>

namespace dlsim {

uint64_t compute_load(const std::vector<DsaBuffer>& buffers) {
  // (time, kind): kind 0 = an end, 1 = a start, so that ends sort first at equal times.
  std::vector<std::pair<std::pair<int64_t, int>, uint64_t>> events;
  events.reserve(buffers.size() * 2);
  for (const auto& b : buffers) {
    events.push_back({{b.lower, 1}, b.size});
    events.push_back({{b.upper, 0}, b.size});
  }
  std::sort(events.begin(), events.end());
  uint64_t live = 0, peak = 0;
  for (const auto& [key, size] : events) {
    if (key.second == 1) {
      live += size;
      peak = std::max(peak, live);
    } else {
      live -= size;
    }
  }
  return peak;
}

}  // namespace dlsim
