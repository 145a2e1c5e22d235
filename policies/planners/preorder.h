#pragma once
// The static priority orders of the capacity search (MiniMalloc's preorderings): among buffers with equal
// minimum offsets, the one ranked first is tried first. W = lifetime width, A = area (size x width), T = the
// largest bytes total among the buffer's sections; each descending, ties by buffer index.
#include <cstdint>
#include <vector>

#include "policies/planners/conflict_graph.h"
#include "policies/planners/dsa_instance.h"

namespace dlsim {

enum class Preorder { RoundRobin, WidthAreaTotal, TotalAreaWidth, TotalWidthArea };

// The keys of one order, most significant first ("WAT", "TAW", "TWA"); RoundRobin names WAT.
const char* preorder_letters(Preorder order);

// Sorts the buffer indices `ids` into the order `letters`, T being total[i].
void sort_by_preorder(std::vector<int>& ids, const std::vector<DsaBuffer>& buffers, const std::vector<int64_t>& total,
                      const char* letters);

// rank[i]: the position of buffer i in `order`, T taken over the live bytes of `graph`'s sections.
std::vector<int> priority_rank(const std::vector<DsaBuffer>& buffers, const ConflictGraph& graph, Preorder order);

// A deterministic perturbation of a rank permutation for a jittered restart: each rank plus a pseudo-random
// offset in [0, window), re-sorted, so each buffer moves only a few places; `seed` picks the perturbation.
std::vector<int> jitter_ranks(const std::vector<int>& rank, uint64_t seed, int window);

}  // namespace dlsim
