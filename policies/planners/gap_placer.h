#pragma once
// The placement step shared by the greedy planners: among already placed buffers whose lifetimes intersect a
// new buffer's, find the smallest address gap that holds it (best fit), else the top of those buffers.
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// A buffer already given an address range, for the gap search.
struct PlacedRange {
  uint64_t offset;
  uint64_t end;  // offset + size
};

// `occupied`: the address ranges of the placed buffers that conflict with the new one, sorted by offset (they
// may overlap each other: they need not be live at the same time). Returns the start of the smallest gap of at
// least `size` bytes between them, counting the gap below the lowest from 0; the lowest such gap wins a tie;
// when no gap fits, the end of the highest range (0 when there are none).
uint64_t best_fit_offset(const std::vector<PlacedRange>& occupied, uint64_t size);

}  // namespace dlsim
