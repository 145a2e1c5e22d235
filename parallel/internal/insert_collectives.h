#pragma once
// The last step of rank_local_graph (parallel/rank_local_graph.h): each listed collective site becomes a collective
// op of the graph (hw/collective_op.h), placed in the host's issue order right after the op it follows. The graph
// keeps its tensors (same ids); its ops are renumbered in the new order, and the sites' op ids with them.
#include "parallel/rank_graph.h"

namespace dlsim::parallel::internal {

// Sites of one rank (ranks < 2) are left out: a group of one rank exchanges nothing. Throws ConfigError("parallel")
// for a site after an op the graph does not have.
void insert_collectives(RankLocalGraph& r);

}  // namespace dlsim::parallel::internal
