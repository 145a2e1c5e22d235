#include "policies/swap/checkmate/remat_problem.h"

#include <algorithm>

namespace dlsim {

RematProblem RematProblem::build(const Graph& g, const std::vector<OpId>& order, const std::vector<double>& op_ns) {
  RematProblem p;
  p.n = static_cast<int>(order.size());
  const auto n = static_cast<size_t>(p.n);
  p.op = order;
  p.cost = op_ns;
  p.cost.resize(n, 0.0);
  p.workspace.assign(n, 0);
  p.recomputable.assign(n, 0);
  p.followers.assign(n, {});
  p.makes.assign(n, {});
  p.reads.assign(n, {});
  const size_t nt = g.tensors().size();
  std::vector<int> value_of(nt, -1), first(nt, -1), last(nt, -1);
  for (size_t i = 0; i < n; ++i) {
    const Op& o = g.op(order[i]);
    for (TensorId t : o.outputs) {  // a first use that is a write makes a value
      const auto ti = static_cast<size_t>(t);
      if (!g.tensor(t).persistent && first[ti] < 0 && !std::count(o.inputs.begin(), o.inputs.end(), t)) {
        value_of[ti] = static_cast<int>(p.values.size());
        p.values.push_back({t, static_cast<int>(i), g.tensor(t).bytes, {}, static_cast<int>(i), static_cast<int>(i)});
        p.makes[i].push_back(value_of[ti]);
      }
    }
    for (const auto* v : {&o.inputs, &o.outputs})
      for (TensorId t : *v) {
        const auto ti = static_cast<size_t>(t);
        if (first[ti] < 0) first[ti] = static_cast<int>(i);
        last[ti] = static_cast<int>(i);
        const int val = value_of[ti];
        if (val < 0 || p.values[static_cast<size_t>(val)].maker == static_cast<int>(i)) continue;
        auto& u = p.values[static_cast<size_t>(val)].users;
        if (u.empty() || u.back() != static_cast<int>(i)) u.push_back(static_cast<int>(i));
        auto& r = p.reads[i];
        if (std::find(r.begin(), r.end(), val) == r.end()) r.push_back(val);
      }
    if (o.workspace != kNoTensor) p.workspace[i] = g.tensor(o.workspace).bytes;
  }
  for (auto& r : p.reads) std::sort(r.begin(), r.end());
  // In-place forward followers of each maker; any other writer makes its values impossible to re-make.
  std::vector<char> other_writer(n, 0);
  for (size_t j = 0; j < n; ++j) {
    const Op& o = g.op(order[j]);
    for (TensorId t : o.outputs) {
      const int v = value_of[static_cast<size_t>(t)];
      if (v < 0) continue;
      const int m = p.values[static_cast<size_t>(v)].maker;
      if (m == static_cast<int>(j)) continue;
      const bool in_place = o.phase == Phase::Forward && std::count(o.inputs.begin(), o.inputs.end(), t) > 0;
      if (in_place) p.followers[static_cast<size_t>(m)].push_back(static_cast<int>(j));
      else other_writer[static_cast<size_t>(m)] = 1;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Op& o = g.op(order[i]);
    bool ok = o.phase == Phase::Forward && !other_writer[i];
    for (TensorId t : o.outputs)  // in place itself, or writing a tensor some other op made
      if (!g.tensor(t).persistent && (value_of[static_cast<size_t>(t)] < 0 ||
                                      p.values[static_cast<size_t>(value_of[static_cast<size_t>(t)])].maker != static_cast<int>(i)))
        ok = false;
    auto& f = p.followers[i];
    std::sort(f.begin(), f.end());
    f.erase(std::unique(f.begin(), f.end()), f.end());
    p.recomputable[i] = ok;
  }
  // need: a fixpoint, as a follower's reads are needed as late as its maker may be re-run; each pass only raises.
  std::vector<int> follows(n, -1);  // follower -> its recomputable maker
  for (size_t i = 0; i < n; ++i)
    if (p.recomputable[i])
      for (int j : p.followers[i]) follows[static_cast<size_t>(j)] = static_cast<int>(i);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t v = p.values.size(); v-- > 0;) {
      Value& x = p.values[v];
      int need = x.need;
      for (int j : x.users) {
        const auto ju = static_cast<size_t>(j);
        need = std::max(need, p.recomputable[ju] ? p.need_of(j) : j);
        if (follows[ju] >= 0 && follows[ju] != x.maker) need = std::max(need, p.need_of(follows[ju]));
      }
      if (need != x.need) {
        x.need = need;
        changed = true;
      }
    }
  }
  std::vector<std::vector<int>> writes(nt);  // positions writing each tensor, ascending
  for (size_t i = 0; i < n; ++i)
    for (TensorId t : g.op(order[i]).outputs) {
      auto& w = writes[static_cast<size_t>(t)];
      if (w.empty() || w.back() != static_cast<int>(i)) w.push_back(static_cast<int>(i));
    }
  for (Value& x : p.values) x.last_write = writes[static_cast<size_t>(x.tensor)].back();
  p.stable_until.assign(n, p.n);
  for (size_t i = 0; i < n; ++i) {
    const Op& o = g.op(order[i]);
    for (TensorId t : o.inputs) {
      if (std::count(o.outputs.begin(), o.outputs.end(), t)) continue;  // its own state, or in place
      const auto& w = writes[static_cast<size_t>(t)];
      const auto it = std::upper_bound(w.begin(), w.end(), static_cast<int>(i));
      if (it != w.end()) p.stable_until[i] = std::min(p.stable_until[i], *it);
    }
  }
  // What no plan changes: persistent tensors throughout, tensors first read from their first to last use.
  std::vector<int64_t> diff(n + 1, 0);
  uint64_t persistent = 0;
  for (const Tensor& t : g.tensors()) {
    const auto ti = static_cast<size_t>(t.id);
    if (t.persistent) {
      persistent += t.bytes;
    } else if (value_of[ti] < 0 && first[ti] >= 0) {
      diff[static_cast<size_t>(first[ti])] += static_cast<int64_t>(t.bytes);
      diff[static_cast<size_t>(last[ti]) + 1] -= static_cast<int64_t>(t.bytes);
    }
  }
  p.base_bytes.assign(n, 0);
  int64_t run = 0;
  for (size_t i = 0; i < n; ++i) {
    run += diff[i];
    p.base_bytes[i] = persistent + static_cast<uint64_t>(run);
  }
  return p;
}

uint64_t RematProblem::made_bytes(int i) const {
  uint64_t b = 0;
  for (int v : makes[static_cast<size_t>(i)]) b += values[static_cast<size_t>(v)].bytes;
  return b;
}

int RematProblem::need_of(int i) const {
  int need = i;
  for (int v : makes[static_cast<size_t>(i)]) need = std::max(need, values[static_cast<size_t>(v)].need);
  return need;
}

double RematProblem::rerun_cost(int i, int t) const {
  double c = cost[static_cast<size_t>(i)];
  for (int j : followers[static_cast<size_t>(i)])
    if (j < t) c += cost[static_cast<size_t>(j)];
  return c;
}

std::vector<int> RematProblem::rerun_reads(int i, int t) const {
  std::vector<int> r = reads[static_cast<size_t>(i)];
  const auto& own = makes[static_cast<size_t>(i)];
  for (int j : followers[static_cast<size_t>(i)])
    if (j < t)
      for (int v : reads[static_cast<size_t>(j)])
        if (std::find(own.begin(), own.end(), v) == own.end()) r.push_back(v);
  std::sort(r.begin(), r.end());
  r.erase(std::unique(r.begin(), r.end()), r.end());
  return r;
}

bool RematProblem::rerun_reads_value(int i, int t, int v) const {
  const auto& r = reads[static_cast<size_t>(i)];
  if (std::binary_search(r.begin(), r.end(), v)) return true;
  for (int j : followers[static_cast<size_t>(i)])
    if (j < t && std::binary_search(reads[static_cast<size_t>(j)].begin(), reads[static_cast<size_t>(j)].end(), v)) return true;
  return false;
}

bool RematProblem::can_rerun(int i, int t) const {
  if (i >= t || !recomputable[static_cast<size_t>(i)] || t > need_of(i) || t > stable_until[static_cast<size_t>(i)]) return false;
  for (int j : followers[static_cast<size_t>(i)])
    if (j < t && t > stable_until[static_cast<size_t>(j)]) return false;
  return true;
}

}  // namespace dlsim
