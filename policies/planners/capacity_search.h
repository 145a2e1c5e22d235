#pragma once
// The exact search at the heart of the `optimal` planner: does a placement of height <= capacity exist?
// Our own implementation of the algorithm of MiniMalloc (Moffitt, ASPLOS'23), as published and as its source
// describes it:
//
// * Canonical placements. Every buffer sits at its lowest feasible offset on top of the already placed buffers
//   it conflicts with (its "minimum offset"); any placement can be pushed down into such a one. Buffers are
//   placed in non-decreasing (minimum offset, priority rank) order, so each canonical placement is built in
//   exactly one order: after placing a buffer at (offset o, rank r), only buffers whose key is >= (o, r) may
//   be placed next (the monotonic floor). A node branches over *which* buffer goes next.
// * Dominance. A buffer may go next only at an offset below the lowest top any unplaced buffer could reach
//   (min over unplaced u of minimum offset(u) + size(u)): otherwise that buffer u fits underneath and the
//   placement is not the canonical representative.
// * Section inference. For every time section s, everything unplaced in s must stack above
//   max(floor(s), o): prune when that plus the unplaced bytes in s exceeds the capacity. floor(s) only rises
//   where a buffer is placed, so this is checked over the placed buffer's sections (a segment tree of the
//   unplaced bytes per section) plus o + the largest unplaced total anywhere.
// * Raised stack (ours): after placing c with top t, in each section of the buffers it raised, the unplaced
//   buffers that cannot start below t must fit between t and the capacity.
// * Dynamic ordering: candidates are tried by minimum offset, then by a static priority (MiniMalloc's
//   preorderings, preorder.h: width, area and largest section total in three different orders). Each part of
//   a dynamic decomposition gets a fresh preorder (MiniMalloc's SubSolve), its T taken over the bytes still
//   unplaced, so the buffers of its most crowded remaining sections come first. The search restarts
//   round-robin over the three priorities with a node limit that doubles (2n, 4n, ...), as MiniMalloc does,
//   so one unlucky order does not eat the whole budget. Our addition: jittered restarts (each priority order
//   slightly and deterministically perturbed, a new perturbation each time, with a slowly growing node limit)
//   take turns with that schedule, each getting about half of the nodes.
// Temporal decomposition is done by the caller (optimal_planner: parts of the instance no buffer crosses).
//
// Exploration order depends only on the input; with a node limit and no deadline the outcome is deterministic.
#include <vector>

#include "policies/planners/conflict_graph.h"
#include "policies/planners/dsa_instance.h"
#include "policies/planners/preorder.h"
#include "policies/planners/search_types.h"

namespace dlsim {

// `graph` must be build_conflict_graph(buffers, ...) and complete.
SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, const ConflictGraph& graph, uint64_t capacity,
                             const SearchLimits& limits, Preorder preorder = Preorder::RoundRobin,
                             const SearchRules& rules = {});

// Convenience: builds the graph first (Stopped when the deadline passes while building).
SearchResult search_capacity(const std::vector<DsaBuffer>& buffers, uint64_t capacity, const SearchLimits& limits,
                             Preorder preorder = Preorder::RoundRobin, const SearchRules& rules = {});

}  // namespace dlsim
