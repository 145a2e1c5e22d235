#pragma once
// One rank's training graph with what the run reads beside it: each tensor's memory category and where the
// layout's collectives go. Made by rank_local_graph.h.
#include <vector>

#include "parallel/collective_site.h"
#include "parallel/memory_category.h"
#include "workloads/graph.h"

namespace dlsim::parallel {

struct RankLocalGraph {
  Graph graph;
  std::vector<MemoryCategory> categories;    // one per tensor of graph
  std::vector<CollectiveSite> collectives;  // in the order they are issued within the iteration
};

}  // namespace dlsim::parallel
