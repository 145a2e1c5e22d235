#pragma once
// Checkmate at real sizes: the training graph contracted to a coarse graph of at most N nodes, which Checkmate's
// MILP (checkmate_milp.h) solves exactly, and the coarse plan lowered back to a per-op plan (policies/swap/
// checkmate/checkmate_swap.h says what is done with it).
//
// Each coarse node is a chunk: a contiguous segment of the issue order. A contiguous partition of a topological
// order is a valid DAG contraction (every edge between chunks goes forward, so the coarse graph has no cycle), the
// chunks keep the issue order as the coarse stages' order, and a chunk re-runs as the ops it holds, in order.
// The chunks (remat_chunks):
//  - forward: segments of about equal op count, each cut moved within half a segment to where the fewest forward
//    values cross it (an articulation point of the forward graph where there is one, as Chen et al.'s sqrt(n)
//    segments: a ResNet block or transformer layer boundary), and never between a value's maker and a forward op
//    that updates it in place after it (ReLU(inplace=True), `out += identity`), which must re-run with it;
//  - backward and optimizer: cut where the backward ops go on to differentiate an earlier forward chunk and none
//    after the cut belongs to a later one (each forward segment with its backward counterpart, Checkmate's own
//    layer-level graph); runs longer than the nodes left allow are split evenly.
//  About half the nodes go to the forward pass; when the backward's clean cuts make more chunks than allowed, the
//  forward is cut coarser until the total fits.
// The coarse graph (coarsen_remat): one op per chunk (forward when all its ops are), reading and writing the
// tensors its ops read and write across the chunk's boundary. Tensors touched by the same chunks in the same way
// are one coarse tensor (kept or dropped together, as a layer-level graph keeps a layer's saved activations
// together). A value used inside one chunk only is not in it: the chunk's workspace is the most such values and
// its ops' workspaces hold at once, beyond the chunk's outputs made by then. Memory is counted conservatively: a
// chunk's outputs from its start, its inputs to its end, a tensor that is not a value from its first chunk to its
// last, so a coarse plan within a budget is within it per op too, up to what the lowering does differently (the
// caller checks the lowered plan's load; checkmate_swap.h says how a miss is handled).
#include <vector>

#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

struct RematCoarsening {
  std::vector<int> begin;       // chunk c holds positions begin[c] .. begin[c+1]-1 of `fine_order`; size chunks+1
  std::vector<OpId> fine_order;
  Graph graph;                  // op c is chunk c (ops stored in chunk order)
  std::vector<OpId> order;      // 0 .. chunks-1
  std::vector<double> op_ns;    // per chunk: the sum of its ops' times
  std::vector<std::vector<TensorId>> members;  // per coarse tensor, the fine tensors it stands for (a workspace: none)
  int forward_chunks = 0;

  int chunks() const { return static_cast<int>(begin.size()) - 1; }
  // A plan for the coarse graph as a plan for the fine one: a recomputation before chunk T re-runs every op of its
  // chunks, in order, right before T's first op; a drop of a coarse tensor after chunk H drops each fine tensor it
  // stands for after H's last op. Plans with copies are not lowered (the caller solves without them).
  SwapPlan lower(const SwapPlan& coarse) const;
};

// The chunks' begin positions (remat_chunks(...).size() - 1 <= max_chunks, for max_chunks >= 1): one op per chunk
// when the order has no more ops than max_chunks.
std::vector<int> remat_chunks(const Graph& g, const std::vector<OpId>& order, int max_chunks);

// The coarse graph of `begin`'s chunks; `op_ns` by position.
RematCoarsening coarsen_remat(const Graph& g, const std::vector<OpId>& order, const std::vector<double>& op_ns,
                              const std::vector<int>& begin);

}  // namespace dlsim
