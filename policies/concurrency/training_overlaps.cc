// The two overlaps that exist only in training: a convolution's (or linear's) backward-data next to its
// backward-weight, and the optimizer's updates next to the rest of the backward pass.
#include <algorithm>

#include "policies/concurrency/schedules.h"

namespace dlsim {

namespace {

// A stream for a side job: a new one while max_streams allows, else the last one.
int side_stream(Schedule& s, int max_streams) {
  if (s.num_streams < max_streams) return s.num_streams++;
  return max_streams - 1;
}

// Whether some op issued after `o` does not depend on it: only then can a side stream run `o` beside anything.
// (On a chain nothing can, and moving the op would only add a stream and its events.)
bool can_overlap_later(const OpDag& dag, const Schedule& s, OpId o) {
  const size_t n = s.order.size();
  size_t pos = 0;
  while (s.order[pos] != o) ++pos;
  const size_t later = n - 1 - pos;
  std::vector<char> seen(n, 0);
  std::vector<OpId> stack = {o};
  size_t descendants = 0;
  while (!stack.empty() && descendants < later) {
    const OpId u = stack.back();
    stack.pop_back();
    for (OpId v : dag.succ[static_cast<size_t>(u)])
      if (!seen[static_cast<size_t>(v)]) {
        seen[static_cast<size_t>(v)] = 1;
        ++descendants;
        stack.push_back(v);
      }
  }
  return descendants < later;
}

}  // namespace

void split_dgrad_wgrad(const Graph& g, const OpDag& dag, Schedule& s, int max_streams) {
  if (max_streams < 2) return;
  std::vector<OpId> moved;
  for (const Op& op : g.ops())
    if ((op.kind == OpKind::Conv2dBwdFilter || op.kind == OpKind::LinearBwdWeight) && can_overlap_later(dag, s, op.id))
      moved.push_back(op.id);
  if (moved.empty()) return;
  const int side = side_stream(s, max_streams);
  for (OpId o : moved) s.stream_of[static_cast<size_t>(o)] = side;
  compact_streams(s);
}

void overlap_optimizer(const Graph& g, const OpDag& dag, Schedule& s, int max_streams) {
  if (max_streams < 2) return;
  const size_t n = g.ops().size();
  // Each optimizer op takes the position of the last op it depends on (its anchor) and goes right after it:
  // (anchor position, optimizer after the rest, original position).
  std::vector<int> pos(n);
  for (size_t i = 0; i < n; ++i) pos[static_cast<size_t>(s.order[i])] = static_cast<int>(i);
  std::vector<int> key(n);
  for (size_t i = 0; i < n; ++i) {
    const OpId o = s.order[i];
    if (g.op(o).phase != Phase::Optimizer) {
      key[static_cast<size_t>(o)] = static_cast<int>(i);
      continue;
    }
    int k = -1;
    for (OpId p : dag.pred[static_cast<size_t>(o)]) k = std::max(k, key[static_cast<size_t>(p)]);
    key[static_cast<size_t>(o)] = k;
  }
  std::vector<OpId> order = s.order;
  std::stable_sort(order.begin(), order.end(), [&](OpId a, OpId b) {
    const auto ka = key[static_cast<size_t>(a)], kb = key[static_cast<size_t>(b)];
    if (ka != kb) return ka < kb;
    const bool oa = g.op(a).phase == Phase::Optimizer, ob = g.op(b).phase == Phase::Optimizer;
    if (oa != ob) return ob;  // the anchor first
    return pos[static_cast<size_t>(a)] < pos[static_cast<size_t>(b)];
  });
  s.order = std::move(order);
  std::vector<OpId> moved;
  for (const Op& op : g.ops())
    if (op.phase == Phase::Optimizer && can_overlap_later(dag, s, op.id)) moved.push_back(op.id);
  if (moved.empty()) return;
  const int side = side_stream(s, max_streams);
  for (OpId o : moved) s.stream_of[static_cast<size_t>(o)] = side;
  compact_streams(s);
}

}  // namespace dlsim
