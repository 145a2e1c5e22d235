#pragma once
// The time structure the exact search works on: the instance cut into sections (maximal time intervals with a
// constant live set), each buffer's section range, the bytes live per section, and the conflict graph (buffers
// whose lifetimes intersect) in compressed form: one flat array of neighbours and per-buffer offsets into it,
// 4 bytes per neighbour, because real training instances have tens of millions of conflicting pairs.
#include <chrono>
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

struct ConflictGraph {
  std::vector<int> first, last;            // per buffer, inclusive section range
  std::vector<int64_t> live_bytes;         // per section
  std::vector<uint64_t> begin;             // per buffer + 1: neighbours of i are adj[begin[i] .. begin[i+1])
  std::vector<int32_t> adj;
  bool complete = false;                   // false when the deadline passed while building (then unusable)
  uint64_t pairs() const { return adj.size() / 2; }
};

// Gives up (complete = false) when `deadline` passes; checks the clock every few thousand buffers.
ConflictGraph build_conflict_graph(const std::vector<DsaBuffer>& buffers,
                                   std::chrono::steady_clock::time_point deadline);

}  // namespace dlsim
