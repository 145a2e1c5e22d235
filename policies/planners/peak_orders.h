#pragma once
// Extra visiting orders for the best-fit placer, used by the `optimal` planner to improve its starting height
// on large real instances (where the exact search cannot finish): buffers live during the busiest moments go
// first, because the height is decided there.
//
// peak(i) = the most bytes live at any moment of buffer i's lifetime (the sweep's live total, maximised over
// the time sections the buffer covers); LOAD = the maximum of peak(i).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

std::vector<uint64_t> buffer_peaks(const std::vector<DsaBuffer>& buffers);

enum class PeakOrder {
  PeakThenSize,   // peak descending, then size descending, then input position
  PeakThenWidth,  // peak descending, then lifetime length descending, then size descending, then input position
};

// Indices into `buffers` in the given order.
std::vector<size_t> peak_order(const std::vector<DsaBuffer>& buffers, const std::vector<uint64_t>& peaks,
                               PeakOrder order);

// The "squeaky wheel" step of the optimal planner's repair: the same order with the buffers whose top
// (offset + size) lies above `level` moved to the front, keeping their relative order and that of the rest.
// Placing the buffers that ended up sticking out first lets them take the low addresses.
std::vector<size_t> promote_above(const std::vector<DsaBuffer>& buffers, const std::vector<size_t>& order,
                                  const std::vector<uint64_t>& offsets, uint64_t level);

}  // namespace dlsim
