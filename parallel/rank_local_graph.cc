#include "parallel/rank_local_graph.h"

#include <algorithm>

#include "parallel/internal/layout_graphs.h"

namespace dlsim::parallel {

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
  }
  return "?";
}

RankLocalGraph rank_local_graph(Graph training, const ParallelLayout& layout) {
  if (layout.is_single()) {
    std::vector<MemoryCategory> c = default_categories(training);
    return RankLocalGraph{std::move(training), std::move(c), {}};
  }
  RankLocalGraph r = layout.layout == Layout::Ddp    ? internal::ddp_graph(training, layout)
                     : layout.layout == Layout::Fsdp ? internal::fsdp_graph(training, layout)
                                                     : internal::zero_graph(training, layout);
  // In issue order: by the op they follow (the iteration's start first), then as each layout listed them.
  std::stable_sort(r.collectives.begin(), r.collectives.end(),
                   [](const CollectiveSite& a, const CollectiveSite& b) { return a.issue_after < b.issue_after; });
  return r;
}

}  // namespace dlsim::parallel
