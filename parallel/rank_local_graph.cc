#include "parallel/rank_local_graph.h"

#include "parallel/internal/insert_collectives.h"
#include "parallel/internal/layout_graphs.h"

namespace dlsim::parallel {

RankLocalGraph rank_local_graph(Graph training, const ParallelLayout& layout) {
  if (layout.data_parallel_single()) {
    std::vector<MemoryCategory> c = default_categories(training);
    return RankLocalGraph{std::move(training), std::move(c), {}};
  }
  RankLocalGraph r = layout.layout == Layout::Ddp    ? internal::ddp_graph(training, layout)
                     : layout.layout == Layout::Fsdp ? internal::fsdp_graph(training, layout)
                                                     : internal::zero_graph(training, layout);
  for (CollectiveSite& s : r.collectives) s.ranks_per_node = layout.ranks_per_node;
  internal::insert_collectives(r);
  return r;
}

}  // namespace dlsim::parallel
