#pragma once
// The placed buffers whose lifetimes meet a new buffer's, found without scanning every placed buffer: the
// buffers (all known up front) sorted by `lower`, under a tree holding the largest `upper` of the placed ones in
// each range. A query walks the prefix with lower < upper of the new buffer and enters only ranges whose largest
// upper passes its lower: O((k + 1) log n) for k conflicts. Their number is known first in O(log n) (placed with
// lower < upper of the new one, less placed with upper <= its lower), so that best fit uses the index where the
// conflicts are few and the contiguous scan of every placed buffer where they are many (greedy_planners.cc).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

class LifetimeIndex {
 public:
  explicit LifetimeIndex(const std::vector<DsaBuffer>& buffers);
  void place(size_t buffer);
  // Appends to `out` the placed buffers whose lifetimes intersect buffer `b`'s (in no particular order).
  void conflicts(const DsaBuffer& b, std::vector<size_t>& out) const;
  // How many placed buffers conflicts() would give.
  size_t count_conflicts(const DsaBuffer& b) const;

 private:
  void collect(size_t node, size_t node_lo, size_t node_hi, size_t end, int64_t lower, std::vector<size_t>& out) const;

  const std::vector<DsaBuffer>& buffers_;
  std::vector<size_t> by_lower_;    // buffer indices by (lower, index)
  std::vector<int64_t> lowers_;     // their lowers, for the prefix search
  std::vector<size_t> rank_;        // buffer index -> position in by_lower_
  size_t leaves_ = 1;
  std::vector<int64_t> max_upper_;  // tree over positions; kNone where nothing is placed
  // Counts of placed buffers by rank of lower and of upper (Fenwick trees), for count_conflicts.
  std::vector<int64_t> uppers_;     // every buffer's upper, sorted
  std::vector<size_t> upper_rank_;  // buffer index -> its rank among uppers_ (ties by index)
  std::vector<uint32_t> placed_by_lower_, placed_by_upper_;
};

}  // namespace dlsim
