#include "policies/swap/singa/singa_trace.h"

#include <algorithm>

namespace dlsim {

SingaTrace::SingaTrace(const Graph& g, const IterationProfile& profile) {
  const size_t n = profile.order.size();
  std::vector<int> first(g.tensors().size(), -1), last(g.tensors().size(), -1);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g.op(profile.order[i]);
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v) {
        if (first[static_cast<size_t>(t)] < 0) first[static_cast<size_t>(t)] = static_cast<int>(i);
        last[static_cast<size_t>(t)] = static_cast<int>(i);
      }
  }
  uint64_t load = 0;
  for (const Tensor& t : g.tensors())
    if (t.persistent) load += t.bytes;
  TimeNs clock = 0;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g.op(profile.order[i]);
    const int pos = static_cast<int>(i);
    auto add = [&](BlockOp k, TensorId t, TimeNs time) {
      clock = std::max(clock, time);
      const uint64_t b = g.tensor(t).bytes;
      if (k == BlockOp::Malloc) load += b;
      if (k == BlockOp::Free) load -= b;
      r_.push_back({k, t, b, pos, clock, load});
    };
    std::vector<TensorId> ins, outs;
    for (TensorId t : op.inputs)
      if (std::find(ins.begin(), ins.end(), t) == ins.end()) ins.push_back(t);
    for (TensorId t : op.outputs)
      if (std::find(outs.begin(), outs.end(), t) == outs.end()) outs.push_back(t);
    const TimeNs start = profile.op_start[i], end = profile.op_end[i];
    // the op's non-persistent tensors whose first (last) use it is, inputs first, each once
    auto at_edge = [&](const std::vector<int>& edge) {
      std::vector<TensorId> v;
      for (const auto* list : {&ins, &outs})
        for (TensorId t : *list)
          if (!g.tensor(t).persistent && edge[static_cast<size_t>(t)] == pos && std::find(v.begin(), v.end(), t) == v.end())
            v.push_back(t);
      return v;
    };
    for (TensorId t : at_edge(first)) add(BlockOp::Malloc, t, start);
    const bool ws = op.workspace != kNoTensor && g.tensor(op.workspace).bytes > 0;
    if (ws) add(BlockOp::Malloc, op.workspace, start);
    for (TensorId t : ins) add(BlockOp::Read, t, start);
    for (TensorId t : outs) add(BlockOp::Write, t, start);
    if (ws) add(BlockOp::Free, op.workspace, end);
    for (TensorId t : at_edge(last)) add(BlockOp::Free, t, end);
  }
  for (size_t i = 0; i < r_.size(); ++i)
    if (r_[i].load > r_[static_cast<size_t>(peak_)].load) peak_ = static_cast<int>(i);
}

int SingaTrace::after_pos(int idx) const {
  const BlockRecord& r = at(idx);
  return r.op == BlockOp::Free ? r.pos : r.pos - 1;
}

int SingaTrace::first_at_or_after(TimeNs t) const {
  auto it = std::lower_bound(r_.begin(), r_.end(), t, [](const BlockRecord& r, TimeNs v) { return r.time < v; });
  return static_cast<int>(it - r_.begin());
}

int SingaTrace::last_at_or_before(TimeNs t) const {
  auto it = std::upper_bound(r_.begin(), r_.end(), t, [](TimeNs v, const BlockRecord& r) { return v < r.time; });
  return static_cast<int>(it - r_.begin()) - 1;
}

}  // namespace dlsim
