#pragma once
// An offline memory-planning instance (dynamic storage allocation, DSA): buffers with a half-open live
// interval [lower, upper) and a size, to be given offsets in one arena so that buffers live at the same time
// never share a byte. The height of a placement is max(offset + size); LOAD (see load.h) bounds it below.
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

// Offsets are indexed like the buffer vector they were computed for.
uint64_t placement_height(const std::vector<DsaBuffer>& buffers, const std::vector<uint64_t>& offsets);

}  // namespace dlsim
