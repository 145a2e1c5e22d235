#include "policies/swap/core/remat_graph.h"

#include <algorithm>
#include <unordered_map>

namespace dlsim {

RematGraph::RematGraph(const Graph& g, const std::vector<OpId>& order, const IterationProfile& profile)
    : g_(g), order_(order), load_(g, order) {
  const size_t n = order.size(), nt = g.tensors().size();
  cost_.assign(n, 1);
  if (profile.op_start.size() == n && profile.op_end.size() == n)
    for (size_t i = 0; i < n; ++i) cost_[i] = std::max<TimeNs>(1, profile.op_end[i] - profile.op_start[i]);

  producer_.assign(nt, -1);
  for (const Tensor& t : g.tensors()) {
    const auto& w = load_.writes(t.id);
    if (t.persistent || w.size() != 1) continue;
    const Op& op = op_at(w.front());
    if (std::find(op.inputs.begin(), op.inputs.end(), t.id) == op.inputs.end()) producer_[static_cast<size_t>(t.id)] = w.front();
  }
  replayable_.assign(n, 0);
  stable_until_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = op_at(static_cast<int>(i));
    bool ok = op.phase != Phase::Optimizer, writes_transient = false;
    for (TensorId o : op.outputs) {
      if (g.tensor(o).persistent) continue;  // running statistics: updated again by a replay, as under checkpoint
      writes_transient = true;
      ok = ok && producer_[static_cast<size_t>(o)] == static_cast<int>(i);
    }
    ok = ok && writes_transient;
    replayable_[i] = ok ? 1 : 0;
    // The first write of an input after position i bounds where a replay still reads the same values.
    int until = static_cast<int>(n);
    for (TensorId v : op.inputs) {
      const auto& w = load_.writes(v);
      const auto it = std::upper_bound(w.begin(), w.end(), static_cast<int>(i));
      if (it != w.end()) until = std::min(until, *it);
    }
    stable_until_[i] = until;
  }
  for (TensorId t = 0; t < static_cast<TensorId>(nt); ++t)
    if (producer_[static_cast<size_t>(t)] >= 0 && !replayable(producer_[static_cast<size_t>(t)])) producer_[static_cast<size_t>(t)] = -1;
  children_.assign(nt, {});
  for (TensorId t = 0; t < static_cast<TensorId>(nt); ++t) {
    const int p = producer_[static_cast<size_t>(t)];
    if (p < 0) continue;
    const Op& op = op_at(p);
    for (TensorId v : op.inputs) {
      auto& c = children_[static_cast<size_t>(v)];
      if (c.empty() || c.back() != t) c.push_back(t);
    }
  }
}

uint64_t RematGraph::workspace_bytes(int pos) const {
  const Op& op = op_at(pos);
  return op.workspace != kNoTensor ? g_.tensor(op.workspace).bytes : 0;
}

int RematGraph::first_use(TensorId t) const {
  const auto& u = load_.uses(t);
  return u.empty() ? -1 : u.front();
}

int RematGraph::last_use(TensorId t) const {
  const auto& u = load_.uses(t);
  return u.empty() ? -1 : u.back();
}

int RematGraph::next_use(TensorId t, int from) const {
  const auto& u = load_.uses(t);
  const auto it = std::lower_bound(u.begin(), u.end(), from);
  return it == u.end() ? -1 : *it;
}

bool RematGraph::recomputable_at(TensorId t, int at) const {
  // Memo by tensor for this `at` (sparse: most searches touch a handful of tensors).
  std::unordered_map<TensorId, bool> seen;
  auto rec = [&](auto&& self, TensorId u) -> bool {
    const auto it = seen.find(u);
    if (it != seen.end()) return it->second;
    seen[u] = false;  // the graph is acyclic; this only guards against bad input
    const int w = producer(u);
    bool ok = w >= 0 && w < at && at <= stable_until(w);
    if (ok)
      for (TensorId v : op_at(w).inputs) {
        if (persistent(v) || live_at(v, at)) continue;
        if (!self(self, v)) {
          ok = false;
          break;
        }
      }
    seen[u] = ok;
    return ok;
  };
  return rec(rec, t);
}

}  // namespace dlsim
