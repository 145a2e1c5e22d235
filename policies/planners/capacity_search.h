#pragma once
// The exact search at the heart of the `optimal` planner: does a placement of height <= capacity exist?
//
// It explores only *tight* placements, where every buffer sits directly on top of some conflicting buffer (or
// at 0): any placement can be pushed down into a tight one of no greater height, so nothing is lost. Building a
// tight placement bottom-up, each unplaced buffer b has a candidate offset cand(b) = the highest top among the
// placed buffers it conflicts with. At each node the search takes the placeable buffer c with the lowest
// candidate (ties by a static priority) and branches two ways, which split the solutions in two disjoint sets:
//   1. c goes at cand(c) now;
//   2. c ends higher: it is "forbidden" at or below cand(c) until a later placement of a conflicting buffer
//      lifts its candidate (so the branch is dropped at once when no unplaced buffer conflicts with c).
// The lowest candidate M never decreases along a path and every unplaced buffer will end at or above M, so a
// node is pruned when, for some time section s (a maximal interval with a fixed live set),
//   max(floor(s), M) + (bytes of unplaced buffers live in s) > capacity,
// floor(s) being the highest top placed in s. The floor part is checked when a placement raises it, the M part
// with a segment tree holding the unplaced bytes per section (range add, global max).
// This is our own design in the spirit of MiniMalloc (canonical placements, section floors); MiniMalloc's
// dominance rule and decomposition are not reproduced here (temporal decomposition is done by the caller).
//
// The exploration order depends only on the input, so with a node limit (and no time limit) the result is
// deterministic; a time limit can stop it at a machine-dependent point.
#include <chrono>
#include <cstdint>
#include <vector>

#include "policies/planners/dsa_instance.h"

namespace dlsim {

// Which unplaced buffer the search tries first among those with the same lowest candidate offset.
enum class TieOrder { Area, Size, Length, SectionLoad };

struct SearchLimits {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  uint64_t node_limit = 0;  // 0: none
};

enum class SearchOutcome { Found, Infeasible, Stopped };

struct SearchResult {
  SearchOutcome outcome = SearchOutcome::Stopped;
  std::vector<uint64_t> offsets;  // when Found, all tops <= capacity
  uint64_t nodes = 0;
};

SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, uint64_t capacity, const SearchLimits& limits,
                             TieOrder ties = TieOrder::SectionLoad);

}  // namespace dlsim
