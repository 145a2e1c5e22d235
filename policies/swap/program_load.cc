#include "policies/swap/program_load.h"

#include <algorithm>
#include <numeric>

namespace dlsim {

ProgramLoad::ProgramLoad(const Graph& g, const std::vector<OpId>& order) : g_(g), order_(order) {
  const size_t n = order.size(), nt = g.tensors().size();
  uses_.assign(nt, {});
  writes_.assign(nt, {});
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g.op(order[i]);
    const int pos = static_cast<int>(i);
    auto note = [&](std::vector<int>& v) {
      if (v.empty() || v.back() != pos) v.push_back(pos);
    };
    for (TensorId t : op.inputs) note(uses_[static_cast<size_t>(t)]);
    for (TensorId t : op.outputs) {
      note(uses_[static_cast<size_t>(t)]);
      note(writes_[static_cast<size_t>(t)]);
    }
  }
  // Difference array over positions: a transient tensor adds its bytes from its first to its last use.
  std::vector<int64_t> diff(n + 1, 0);
  uint64_t persistent = 0;
  for (const Tensor& t : g.tensors()) {
    const auto& u = uses_[static_cast<size_t>(t.id)];
    if (t.persistent) {
      persistent += t.bytes;
    } else if (!u.empty()) {
      diff[static_cast<size_t>(u.front())] += static_cast<int64_t>(t.bytes);
      diff[static_cast<size_t>(u.back()) + 1] -= static_cast<int64_t>(t.bytes);
    }
  }
  load_.assign(n, 0);
  int64_t running = 0;
  for (size_t i = 0; i < n; ++i) {
    running += diff[i];
    const Op& op = g.op(order[i]);
    const uint64_t ws = op.workspace != kNoTensor ? g.tensor(op.workspace).bytes : 0;
    load_[i] = persistent + static_cast<uint64_t>(running) + ws;
  }
}

uint64_t ProgramLoad::peak() const { return load_.empty() ? 0 : *std::max_element(load_.begin(), load_.end()); }

std::vector<uint64_t> ProgramLoad::with_plan(const SwapPlan& plan, const std::vector<int>& free_points) const {
  std::vector<int64_t> diff(load_.size() + 1, 0);
  for (size_t a = 0; a < plan.actions.size(); ++a) {
    const SwapAction& x = plan.actions[a];
    const int from = free_points[a] + 1, to = x.in_issue_after;  // off the device during [from, to]
    if (from > to) continue;
    const auto b = static_cast<int64_t>(g_.tensor(x.tensor).bytes);
    diff[static_cast<size_t>(from)] -= b;
    diff[static_cast<size_t>(to) + 1] += b;
  }
  std::vector<uint64_t> out(load_.size());
  int64_t running = 0;
  for (size_t i = 0; i < load_.size(); ++i) {
    running += diff[i];
    out[i] = static_cast<uint64_t>(static_cast<int64_t>(load_[i]) + running);
  }
  return out;
}

uint64_t ProgramLoad::peak_with(const SwapPlan& plan, const std::vector<int>& stream_of) const {
  const auto l = with_plan(plan, resolve_free_points(g_, order_, stream_of, plan));
  return l.empty() ? 0 : *std::max_element(l.begin(), l.end());
}

std::vector<int> persistent_home_streams(const Graph& g, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                                         const SwapPlan& plan) {
  std::vector<int> home(g.tensors().size(), -1);
  std::vector<int> last_out(g.tensors().size(), -1);
  for (const Tensor& t : g.tensors())
    if (t.persistent) home[static_cast<size_t>(t.id)] = 0;
  for (const SwapAction& x : plan.actions) {
    const auto ti = static_cast<size_t>(x.tensor);
    if (ti >= home.size() || home[ti] < 0 || x.out_after < last_out[ti]) continue;
    if (x.in_needed_by < 0 || static_cast<size_t>(x.in_needed_by) >= order.size()) continue;
    last_out[ti] = x.out_after;
    home[ti] = stream_of[static_cast<size_t>(order[static_cast<size_t>(x.in_needed_by)])];
  }
  return home;
}

std::vector<int> resolve_free_points(const Graph& g, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                                     const SwapPlan& plan) {
  const size_t na = plan.actions.size();
  std::vector<int> out(na, -1);
  // Actions of one tensor in order of their copy-out: each one's allocation stream is where the previous one
  // brought the tensor back.
  std::vector<size_t> idx(na);
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return plan.actions[a].out_after < plan.actions[b].out_after;
  });
  std::vector<int> stream = persistent_home_streams(g, order, stream_of, plan);
  auto stream_at = [&](int pos) { return stream_of[static_cast<size_t>(order[static_cast<size_t>(pos)])]; };
  for (size_t i = 0; i < order.size(); ++i) {  // first use
    const Op& op = g.op(order[i]);
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v)
        if (stream[static_cast<size_t>(t)] < 0) stream[static_cast<size_t>(t)] = stream_at(static_cast<int>(i));
  }
  for (size_t a : idx) {
    const SwapAction& x = plan.actions[a];
    const int s = stream[static_cast<size_t>(x.tensor)];
    int at = x.free_after;
    if (at < 0) {
      at = x.in_issue_after;
      for (int q = x.out_after + 1; q < x.in_issue_after; ++q)
        if (stream_at(q) == s) {
          at = q;
          break;
        }
    }
    out[a] = at;
    if (x.in_needed_by >= 0 && static_cast<size_t>(x.in_needed_by) < order.size())
      stream[static_cast<size_t>(x.tensor)] = stream_at(x.in_needed_by);
  }
  return out;
}

}  // namespace dlsim
