#pragma once
// What the capacity search (capacity_search.h) is asked and answers: its optional rules, its limits and its
// outcome. Apart so that the search's one run (canonical_search.h) and its restart schedule
// (capacity_search.h) share them without including each other.
#include <chrono>
#include <cstdint>
#include <vector>

namespace dlsim {

// The search's rules that are not needed for completeness, each on by default. Switching one off (tests,
// benchmarks) shows what it saves: a search that runs to its end reaches the same outcome either way, though
// it may find a different placement.
struct SearchRules {
  bool raised_stack = true;    // the raised buffers' stack must fit above the new top
  bool part_preorder = true;   // each part of a decomposition ordered afresh by its unplaced bytes
};

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

}  // namespace dlsim
