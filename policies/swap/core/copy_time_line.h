#pragma once
// A copy's time as SINGA models it: a straight line per direction, latency + bytes x ns per byte (SwapGPU's
// SwapOutTime/SwapInTime, notes singa-memory-management.md section 4.4). SINGA fits the line to synchronous
// cudaMemcpy timings of the blocks larger than 1 MiB it saw in its first iterations; its published constants,
// on PCIe 3.0 x16 with pinned memory, are out 0.0756 ns/B + 47.2 us and in 0.0823 ns/B + 9.7 us.
#include <cstdint>
#include <vector>

#include "hw/cost_model.h"

namespace dlsim {

struct CopyTimeLine {
  double out_ns_per_byte = 0, out_latency_ns = 0;  // device to host
  double in_ns_per_byte = 0, in_latency_ns = 0;    // host to device
  TimeNs out(uint64_t bytes) const;
  TimeNs in(uint64_t bytes) const;
};

// The line read off the link model (its latency and pinned bandwidth per direction).
CopyTimeLine copy_time_from_link(const TransferModel& link);
// SINGA's way: time one copy of each block in each direction on the link and fit a line by least squares.
// With fewer than two distinct sizes there is nothing to fit: the link's own line.
CopyTimeLine fit_copy_time(const TransferModel& link, const std::vector<uint64_t>& block_bytes);

}  // namespace dlsim
