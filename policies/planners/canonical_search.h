#pragma once
// One run of the capacity search (capacity_search.h describes the algorithm): a depth-first search over the
// canonical placements of one instance in one priority order, up to a node cap and a deadline. The restart
// schedule that runs it in several orders is search_capacity's.
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "policies/planners/conflict_graph.h"
#include "policies/planners/dsa_instance.h"
#include "policies/planners/preorder.h"
#include "policies/planners/search_types.h"
#include "policies/planners/rank_min_tree.h"
#include "policies/planners/section_tree.h"

namespace dlsim {

class CanonicalSearch {
 public:
  // `rank`: the root's priority order (priority_rank, perhaps jittered). `order` names its keys, for the
  // fresh preorder of each part of a decomposition; jitter_window > 1 perturbs those too, from `seed`.
  CanonicalSearch(const std::vector<DsaBuffer>& buffers, const ConflictGraph& graph, int64_t capacity,
                  std::vector<int> rank, Preorder order, const SearchRules& rules, int jitter_window, uint64_t seed);

  // Runs until a placement is found, the tree is exhausted, or `node_cap` nodes / the deadline are spent.
  SearchOutcome run(uint64_t node_cap, std::chrono::steady_clock::time_point deadline);

  uint64_t nodes() const { return nodes_; }
  std::vector<uint64_t> offsets() const;

 private:
  using Key = std::pair<int64_t, int>;  // (minimum offset, rank)
  struct Frame {
    size_t begin, next, end;  // this node's candidates in cands_
    size_t mark = 0;          // trail position before the current child's placement
    int placed = -1;          // the buffer placed for the current child
  };

  SearchOutcome solve(int lo, int hi, int left, int depth);
  SearchOutcome unwind(std::vector<Frame>& stack, SearchOutcome out);
  std::vector<int> new_cuts(int c) const;
  SearchOutcome solve_split(int lo, int hi, const std::vector<int>& cuts, int depth);
  size_t rerank(const std::vector<int>& group);
  void restore_ranks(size_t mark);
  void show(const std::vector<int>& group, bool visible);
  void enter(std::vector<Frame>& stack, Key floor, int left);
  bool unplaced_floors_fit(int64_t top);
  void set_min_off(int d, int64_t v);
  void place(int c, int64_t at);
  void unplace(int c, size_t mark);

  const std::vector<DsaBuffer>& b_;
  const ConflictGraph& g_;
  int64_t cap_;
  int n_;
  SearchRules rules_;
  const char* letters_;    // the preorder's keys
  int jitter_window_;      // > 1: each part's order perturbed by up to this many places
  uint64_t jitter_seed_, reranks_ = 0;
  std::vector<int> rank_, by_rank_;
  std::vector<std::pair<int, int>> rank_trail_;  // (buffer, its rank before a part's fresh preorder)
  std::vector<int64_t> min_off_;
  std::vector<char> placed_;
  std::vector<int64_t> solution_;
  RankMinTree tree_;  // per rank: minimum offset and minimum offset + size (unplaced and visible only)
  SectionTree unplaced_;             // unplaced bytes per section
  std::vector<std::pair<int, int64_t>> trail_;  // (buffer, previous minimum offset)
  std::vector<Key> cands_;  // the candidates of every node on the current path, as a stack
  uint64_t nodes_ = 0, node_cap_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  static constexpr int kMaxDepth = 2000;  // nesting of decompositions (each is a C++ call frame)
  // Decomposition, unplaced floors and fresh part preorders, when the section membership lists are small
  // enough (kMaxMembership entries) to keep.
  bool decompose_ = false;
  static constexpr uint64_t kMaxMembership = 4'000'000;
  std::vector<uint32_t> starts_begin_, starts_;     // buffers by first section
  std::vector<int> crossing_;                        // unplaced buffers crossing each section boundary
  std::vector<int64_t> section_unplaced_;            // unplaced bytes per section, as in unplaced_, to read fast
  std::vector<uint32_t> members_begin_, members_;  // the buffers live in each section
  std::vector<uint64_t> stamp_;
  uint64_t epoch_ = 0;
  std::vector<int> raised_;  // buffers whose minimum offset the last placement raised
  std::vector<int64_t> part_total_;  // per buffer: its T in the part being ordered
};

}  // namespace dlsim
