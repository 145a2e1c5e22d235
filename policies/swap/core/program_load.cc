#include "policies/swap/core/program_load.h"

#include <algorithm>
#include <numeric>

#include "policies/swap/core/host_step.h"

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
  std::vector<int> held(g_.tensors().size(), -1);  // a replay that reads a tensor holds it until then
  for (const auto& [t, before] : replay_reads(g_, plan)) {
    const auto& u = uses_[static_cast<size_t>(t)];
    if (!u.empty() && u.front() < before && u.back() < before) held[static_cast<size_t>(t)] = std::max(held[static_cast<size_t>(t)], before);
  }
  for (size_t t = 0; t < held.size(); ++t) {
    if (held[t] < 0 || held[t] >= static_cast<int>(load_.size())) continue;
    const auto b = static_cast<int64_t>(g_.tensors()[t].bytes);
    diff[static_cast<size_t>(uses_[t].back()) + 1] += b;
    diff[static_cast<size_t>(held[t]) + 1] -= b;
  }
  const std::vector<std::vector<int>> drop_points = resolve_drop_points(g_, order_, plan);
  for (size_t r = 0; r < plan.recomputations.size(); ++r) {
    const Recomputation& rc = plan.recomputations[r];
    for (size_t d = 0; d < rc.drops.size(); ++d) {
      const int from = drop_points[r][d] + 1, to = rc.before - 1;  // off the device during [from, to]
      if (drop_points[r][d] < 0 || from > to) continue;
      const auto b = static_cast<int64_t>(g_.tensor(rc.drops[d].tensor).bytes);
      diff[static_cast<size_t>(from)] -= b;
      diff[static_cast<size_t>(to) + 1] += b;
    }
  }
  if (!plan.host_step.empty()) {  // ZeRO-Offload: state in host memory alone, gradients gone once copied out
    const HostStepTensors h = host_step_tensors(g_, order_, plan.host_step);
    const size_t n = load_.size();
    auto off = [&](int from, int to, uint64_t bytes) {  // off the device during [from, to]
      if (from > to) return;
      diff[static_cast<size_t>(from)] -= static_cast<int64_t>(bytes);
      diff[static_cast<size_t>(to) + 1] += static_cast<int64_t>(bytes);
    };
    for (const Tensor& t : g_.tensors())
      if (h.host_only[static_cast<size_t>(t.id)]) off(0, static_cast<int>(n) - 1, t.bytes);
    for (TensorId t : h.to_host) off(h.to_host_after[static_cast<size_t>(t)] + 1, uses_[static_cast<size_t>(t)].back(), g_.tensor(t).bytes);
    for (size_t i = 0; i < n; ++i) {
      const Op& op = g_.op(order_[i]);
      if (h.host_op[static_cast<size_t>(op.id)] && op.workspace != kNoTensor) off(static_cast<int>(i), static_cast<int>(i), g_.tensor(op.workspace).bytes);
    }
    if (plan.host_step.fetch_parameters) {  // a parameter is on the device only from its fetch to its last use there
      for (TensorId t : h.written_back) off(0, static_cast<int>(n) - 1, g_.tensor(t).bytes);
      for (const ParameterFetch& f : parameter_fetches(g_, order_, plan, h)) {
        diff[static_cast<size_t>(f.issue_after + 1)] += static_cast<int64_t>(g_.tensor(f.tensor).bytes);
        diff[static_cast<size_t>(f.last) + 1] -= static_cast<int64_t>(g_.tensor(f.tensor).bytes);
      }
    }
  }
  std::vector<uint64_t> out(load_.size());
  int64_t running = 0;
  for (size_t i = 0; i < load_.size(); ++i) {
    running += diff[i];
    out[i] = static_cast<uint64_t>(static_cast<int64_t>(load_[i]) + running);
  }
  if (!plan.recomputations.empty()) add_replay_peaks(plan, free_points, drop_points, held, out);
  return out;
}

// The live bytes while the replays before position `pos` run, in the lowering's order: what was allocated
// before the op at `pos` (its load without the tensors first used there, its workspace and the tensors the
// replays make again), then per replayed op its newly allocated outputs and its workspace, transient outputs
// leaving after their last replayed reader.
void ProgramLoad::add_replay_peaks(const SwapPlan& plan, const std::vector<int>& free_points,
                                   const std::vector<std::vector<int>>& drop_points, const std::vector<int>& held,
                                   std::vector<uint64_t>& load) const {
  const int n = positions();
  // Per tensor, the ranges of positions it is off the device (swapped out or dropped).
  std::vector<std::vector<std::pair<int, int>>> off(g_.tensors().size());
  for (size_t a = 0; a < plan.actions.size(); ++a)
    off[static_cast<size_t>(plan.actions[a].tensor)].push_back({free_points[a] + 1, plan.actions[a].in_issue_after});
  for (size_t r = 0; r < plan.recomputations.size(); ++r)
    for (size_t d = 0; d < plan.recomputations[r].drops.size(); ++d)
      off[static_cast<size_t>(plan.recomputations[r].drops[d].tensor)].push_back(
          {drop_points[r][d] + 1, plan.recomputations[r].before});  // still off while its replay runs
  auto allocated_before = [&](TensorId t, int pos) {  // on the device once the op at pos-1 is done
    const auto& u = uses_[static_cast<size_t>(t)];
    if (!g_.tensor(t).persistent && (u.empty() || u.front() >= pos || std::max(u.back(), held[static_cast<size_t>(t)]) < pos))
      return false;
    for (const auto& [from, to] : off[static_cast<size_t>(t)])
      if (from <= pos && pos <= to) return false;
    return true;
  };
  std::vector<std::vector<size_t>> at(static_cast<size_t>(n));
  for (size_t r = 0; r < plan.recomputations.size(); ++r) {
    const int b = plan.recomputations[r].before;
    if (b >= 0 && b < n) at[static_cast<size_t>(b)].push_back(r);
  }
  std::vector<char> made(g_.tensors().size(), 0);
  for (int pos = 0; pos < n; ++pos) {
    if (at[static_cast<size_t>(pos)].empty()) continue;
    const Op& here = g_.op(order_[static_cast<size_t>(pos)]);
    int64_t live = static_cast<int64_t>(load[static_cast<size_t>(pos)]);
    if (here.workspace != kNoTensor) live -= static_cast<int64_t>(g_.tensor(here.workspace).bytes);
    std::vector<TensorId> firsts;
    for (const auto* v : {&here.inputs, &here.outputs})
      for (TensorId t : *v)
        if (!g_.tensor(t).persistent && uses_[static_cast<size_t>(t)].front() == pos &&
            std::find(firsts.begin(), firsts.end(), t) == firsts.end())
          firsts.push_back(t);
    for (TensorId t : firsts) live -= static_cast<int64_t>(g_.tensor(t).bytes);
    for (size_t r : at[static_cast<size_t>(pos)])
      for (const Recomputation::Drop& d : plan.recomputations[r].drops) live -= static_cast<int64_t>(g_.tensor(d.tensor).bytes);
    int64_t peak = live;
    std::vector<TensorId> touched_made;
    for (size_t r : at[static_cast<size_t>(pos)]) {
      const Recomputation& rc = plan.recomputations[r];
      auto kept = [&](TensorId t) {
        for (const Recomputation::Drop& d : rc.drops)
          if (d.tensor == t) return true;
        return false;
      };
      // First pass: which outputs each replayed op allocates, and each transient's last replayed reader.
      std::vector<std::vector<TensorId>> allocs(rc.ops.size());
      std::vector<std::pair<TensorId, size_t>> transient;  // tensor, index of its last replayed reader
      for (size_t j = 0; j < rc.ops.size(); ++j) {
        const Op& op = g_.op(rc.ops[j]);
        for (TensorId t : op.inputs)
          for (auto& [tt, last] : transient)
            if (tt == t) last = j;
        for (TensorId t : op.outputs) {
          if (made[static_cast<size_t>(t)] || allocated_before(t, pos)) continue;
          made[static_cast<size_t>(t)] = 1;
          touched_made.push_back(t);
          allocs[j].push_back(t);
          if (!kept(t)) transient.push_back({t, j});
        }
      }
      for (size_t j = 0; j < rc.ops.size(); ++j) {
        const Op& op = g_.op(rc.ops[j]);
        for (TensorId t : allocs[j]) live += static_cast<int64_t>(g_.tensor(t).bytes);
        const int64_t ws = op.workspace != kNoTensor ? static_cast<int64_t>(g_.tensor(op.workspace).bytes) : 0;
        peak = std::max(peak, live + ws);
        for (const auto& [t, last] : transient)
          if (last == j) {
            live -= static_cast<int64_t>(g_.tensor(t).bytes);
            made[static_cast<size_t>(t)] = 0;  // a later replay before the same op allocates it again
          }
      }
    }
    for (TensorId t : touched_made) made[static_cast<size_t>(t)] = 0;
    load[static_cast<size_t>(pos)] = std::max(load[static_cast<size_t>(pos)], static_cast<uint64_t>(std::max<int64_t>(peak, 0)));
  }
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

std::vector<std::vector<int>> resolve_drop_points(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan) {
  std::vector<std::vector<int>> out;
  out.reserve(plan.recomputations.size());
  const int n = static_cast<int>(order.size());
  for (const Recomputation& rc : plan.recomputations) {
    std::vector<int>& v = out.emplace_back();
    for (const Recomputation::Drop& d : rc.drops) {
      int at = d.free_after;
      if (at < 0)
        for (int q = std::min(rc.before, n) - 1; q >= 0 && at < 0; --q) {
          const Op& op = g.op(order[static_cast<size_t>(q)]);
          if (std::count(op.inputs.begin(), op.inputs.end(), d.tensor) || std::count(op.outputs.begin(), op.outputs.end(), d.tensor))
            at = q;
        }
      v.push_back(at);
    }
  }
  return out;
}

std::vector<std::pair<TensorId, int>> replay_reads(const Graph& g, const SwapPlan& plan) {
  std::vector<std::pair<TensorId, int>> out;
  const size_t no = g.ops().size(), nt = g.tensors().size();
  for (const Recomputation& rc : plan.recomputations) {
    std::vector<TensorId> made;
    for (OpId o : rc.ops) {
      if (o < 0 || static_cast<size_t>(o) >= no) break;
      const Op& op = g.op(o);
      for (TensorId t : g.replay_inputs(op))
        if (t >= 0 && static_cast<size_t>(t) < nt && !g.tensor(t).persistent &&
            std::find(made.begin(), made.end(), t) == made.end())
          out.push_back({t, rc.before});
      made.insert(made.end(), op.outputs.begin(), op.outputs.end());
    }
    for (TensorId t : rc.held)  // the cache of selective checkpointing: held as if the replay read them
      if (t >= 0 && static_cast<size_t>(t) < nt && !g.tensor(t).persistent) out.push_back({t, rc.before});
  }
  return out;
}

std::vector<int> held_release(const Graph& g, const std::vector<OpId>& order, const Recomputation& rc) {
  std::vector<int> pos_of(g.ops().size(), -1);
  for (size_t p = 0; p < order.size(); ++p)
    if (order[p] >= 0 && static_cast<size_t>(order[p]) < pos_of.size()) pos_of[static_cast<size_t>(order[p])] = static_cast<int>(p);
  std::vector<int> out;
  for (TensorId t : rc.held) {
    int made = -1;  // the position of the op that first writes it
    for (size_t p = 0; p < order.size() && made < 0; ++p)
      if (std::count(g.op(order[p]).outputs.begin(), g.op(order[p]).outputs.end(), t)) made = static_cast<int>(p);
    int release = -1;
    for (size_t j = 0; j < rc.ops.size(); ++j) {
      const Op& op = g.op(rc.ops[j]);
      const std::vector<TensorId> in = g.replay_inputs(op);
      if (pos_of[static_cast<size_t>(rc.ops[j])] < made || std::count(in.begin(), in.end(), t)) release = static_cast<int>(j);
    }
    out.push_back(release);
  }
  return out;
}

}  // namespace dlsim
