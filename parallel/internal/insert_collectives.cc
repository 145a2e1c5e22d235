#include "parallel/internal/insert_collectives.h"

#include <algorithm>
#include <numeric>

#include "common/config_error.h"
#include "hw/collective_op.h"

namespace dlsim::parallel::internal {

namespace {

CollectiveOp op_of(const CollectiveSite& s) {
  CollectiveOp c;
  c.name = std::string(to_string(s.kind)) + "." + s.unit;
  c.kind = s.kind;
  c.message_bytes = s.bytes;
  c.ranks = static_cast<int>(s.ranks);
  c.ranks_per_node = static_cast<int>(s.ranks_per_node);
  c.stream_tag = s.stream_tag;
  c.phase = s.phase;
  c.inputs = s.inputs;
  c.outputs = s.outputs;
  return c;
}

}  // namespace

void insert_collectives(RankLocalGraph& r) {
  const Graph& old = r.graph;
  const OpId n = static_cast<OpId>(old.ops().size());
  // Sites by the op they follow, in their listed order among those that follow the same op.
  std::vector<size_t> order(r.collectives.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&r](size_t a, size_t b) {
    return r.collectives[a].issue_after < r.collectives[b].issue_after;
  });
  for (const CollectiveSite& s : r.collectives)
    if (s.issue_after < -1 || s.issue_after >= n || s.needed_by < -1 || s.needed_by >= n)
      throw ConfigError("", 0, "parallel", "collective '" + s.unit + "' is placed at an op the graph does not have");

  Graph g;
  g.name = old.name;
  g.batch = old.batch;
  g.blocks = old.blocks;
  g.replay_source = old.replay_source;  // tensor ids are kept, so FSDP's gathered -> regathered map still holds
  for (const Tensor& t : old.tensors()) g.add_tensor(t);  // ids kept: add_tensor numbers them in the same order
  std::vector<OpId> renumbered(static_cast<size_t>(n), -1);
  size_t next = 0;
  auto issue_sites_after = [&](OpId pos) {
    for (; next < order.size() && r.collectives[order[next]].issue_after == pos; ++next) {
      CollectiveSite& s = r.collectives[order[next]];
      if (s.ranks >= 2) s.op = add_collective(g, op_of(s));
    }
  };
  issue_sites_after(-1);
  for (const Op& o : old.ops()) {
    Op copy = o;
    if (copy.forward_op >= 0) copy.forward_op = renumbered[static_cast<size_t>(copy.forward_op)];
    renumbered[static_cast<size_t>(o.id)] = g.add_op(std::move(copy));
    issue_sites_after(o.id);
  }
  for (CollectiveSite& s : r.collectives) {
    if (s.issue_after >= 0) s.issue_after = renumbered[static_cast<size_t>(s.issue_after)];
    if (s.needed_by >= 0) s.needed_by = renumbered[static_cast<size_t>(s.needed_by)];
  }
  // The sites in issue order.
  std::vector<CollectiveSite> sorted;
  sorted.reserve(order.size());
  for (size_t i : order) sorted.push_back(std::move(r.collectives[i]));
  r.collectives = std::move(sorted);
  r.graph = std::move(g);
}

}  // namespace dlsim::parallel::internal
