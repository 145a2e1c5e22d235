#pragma once
// An offline memory-planning instance (dynamic storage allocation, DSA): buffers with a half-open live
// interval [lower, upper) and a size, to be given offsets in one arena so that buffers live at the same time
// never share a byte. The height of a placement is max(offset + size); LOAD (see load.h) bounds it below.
#include <algorithm>
#include <cstdint>
#include <vector>

namespace dlsim {

struct DsaBuffer {
  int64_t id = 0;     // the instance's own id (any integer, unique)
  int64_t lower = 0;  // first time step the buffer is live
  int64_t upper = 0;  // first time step it is no longer live (upper > lower)
  uint64_t size = 0;  // bytes (> 0)
};

// Two buffers conflict when their live intervals intersect.
inline bool lifetimes_overlap(const DsaBuffer& a, const DsaBuffer& b) {
  return a.lower < b.upper && b.lower < a.upper;
}

// The instance's distinct interval endpoints, sorted: section k is the time span [points[k], points[k+1]),
// over which the set of live buffers does not change.
struct TimePoints {
  std::vector<int64_t> points;
  explicit TimePoints(const std::vector<DsaBuffer>& b) {
    points.reserve(2 * b.size());
    for (const auto& x : b) {
      points.push_back(x.lower);
      points.push_back(x.upper);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
  }
  // Index of an endpoint (t must be one of the instance's lower or upper values).
  int index(int64_t t) const {
    return static_cast<int>(std::lower_bound(points.begin(), points.end(), t) - points.begin());
  }
  int sections() const { return std::max(0, static_cast<int>(points.size()) - 1); }
};

// Offsets are indexed like the buffer vector they were computed for.
uint64_t placement_height(const std::vector<DsaBuffer>& buffers, const std::vector<uint64_t>& offsets);

}  // namespace dlsim
