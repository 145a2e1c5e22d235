#include "policies/swap/checkmate/remat_coarsening.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

namespace dlsim {

namespace {

// What the chunking needs per position: the op's phase, the forward op it differentiates, whether a cut before it
// would separate a maker from an in-place follower, and how many forward values a cut before it crosses.
struct ChunkingFacts {
  std::vector<char> forward;
  std::vector<int> differentiates;  // position of the forward op a non-forward op differentiates; -1: none
  std::vector<char> forbidden;      // a cut before p separates a value's maker from a forward op updating it in place
  std::vector<int> crossing;        // forward values made before p and used by a forward op at or after p
};

ChunkingFacts chunking_facts(const Graph& g, const std::vector<OpId>& order) {
  const size_t n = order.size();
  ChunkingFacts f;
  f.forward.assign(n, 0);
  f.differentiates.assign(n, -1);
  std::vector<int> pos_of(g.ops().size(), -1);
  for (size_t p = 0; p < n; ++p) pos_of[static_cast<size_t>(order[p])] = static_cast<int>(p);
  const size_t nt = g.tensors().size();
  std::vector<int> maker(nt, -1), last_forward_use(nt, -1), last_in_place(nt, -1);
  std::vector<char> seen(nt, 0);
  for (size_t p = 0; p < n; ++p) {
    const Op& o = g.op(order[p]);
    const int pi = static_cast<int>(p);
    f.forward[p] = o.phase == Phase::Forward;
    if (!f.forward[p] && o.forward_op >= 0 && static_cast<size_t>(o.forward_op) < pos_of.size())
      f.differentiates[p] = pos_of[static_cast<size_t>(o.forward_op)];
    for (TensorId t : o.outputs) {
      const auto ti = static_cast<size_t>(t);
      const bool reads = std::count(o.inputs.begin(), o.inputs.end(), t) > 0;
      if (!seen[ti] && !reads && !g.tensor(t).persistent && f.forward[p]) maker[ti] = pi;
      if (seen[ti] && reads && f.forward[p] && maker[ti] >= 0) last_in_place[ti] = pi;
    }
    for (const auto* v : {&o.inputs, &o.outputs})
      for (TensorId t : *v) {
        seen[static_cast<size_t>(t)] = 1;
        if (f.forward[p]) last_forward_use[static_cast<size_t>(t)] = pi;
      }
  }
  std::vector<int> forbid(n + 1, 0), cross(n + 1, 0);
  for (size_t t = 0; t < nt; ++t) {
    if (maker[t] < 0) continue;
    if (last_in_place[t] > maker[t]) {
      ++forbid[static_cast<size_t>(maker[t]) + 1];
      --forbid[static_cast<size_t>(last_in_place[t]) + 1];
    }
    if (last_forward_use[t] > maker[t]) {
      ++cross[static_cast<size_t>(maker[t]) + 1];
      --cross[static_cast<size_t>(last_forward_use[t]) + 1];
    }
  }
  f.forbidden.assign(n, 0);
  f.crossing.assign(n, 0);
  int fo = 0, cr = 0;
  for (size_t p = 0; p < n; ++p) {
    fo += forbid[p];
    cr += cross[p];
    f.forbidden[p] = fo > 0;
    f.crossing[p] = cr;
  }
  return f;
}

// Cuts of the forward run [a, b) into segments of about `size` ops: each cut within half a segment of where an even
// split puts it, at the fewest crossing values (then the nearest to the even split), never at a forbidden one.
void cut_forward_run(const ChunkingFacts& f, int a, int b, double size, std::vector<int>& begin) {
  int pos = a;
  while (static_cast<double>(b - pos) > 1.5 * size) {
    const int ideal = pos + static_cast<int>(std::lround(size));
    const int lo = pos + std::max(1, static_cast<int>(size / 2));
    const int hi = std::min(b - 1, pos + static_cast<int>(std::ceil(1.5 * size)));
    int best = -1;
    for (int p = lo; p <= hi; ++p) {
      if (f.forbidden[static_cast<size_t>(p)]) continue;
      const int c = f.crossing[static_cast<size_t>(p)];
      if (best < 0 || c < f.crossing[static_cast<size_t>(best)] ||
          (c == f.crossing[static_cast<size_t>(best)] && std::abs(p - ideal) < std::abs(best - ideal)))
        best = p;
    }
    for (int p = hi + 1; best < 0 && p < b; ++p)
      if (!f.forbidden[static_cast<size_t>(p)]) best = p;
    if (best < 0) break;
    begin.push_back(best);
    pos = best;
  }
}

// Cuts of the non-forward run [a, b) where the ops go on to differentiate an earlier forward chunk and none after
// the cut differentiates one the chunk so far does (ops that differentiate none take the chunk of the op before).
void cut_backward_run(const ChunkingFacts& f, const std::vector<int>& fwd_chunk_of, int a, int b, std::vector<int>& begin) {
  auto key = [&](int p) {
    const int d = f.differentiates[static_cast<size_t>(p)];
    return d >= 0 ? fwd_chunk_of[static_cast<size_t>(d)] : -1;
  };
  std::vector<int> suffix_max(static_cast<size_t>(b - a) + 1, -1);
  for (int p = b - 1; p >= a; --p)
    suffix_max[static_cast<size_t>(p - a)] = std::max(suffix_max[static_cast<size_t>(p - a) + 1], key(p));
  int chunk_min = -1, prev = -1;  // the least key of the chunk so far; the last key seen
  for (int p = a; p < b; ++p) {
    const int k = key(p);
    if (k < 0) continue;
    if (prev >= 0 && k < prev && suffix_max[static_cast<size_t>(p - a)] < chunk_min) {
      begin.push_back(p);
      chunk_min = -1;
    }
    chunk_min = chunk_min < 0 ? k : std::min(chunk_min, k);
    prev = k;
  }
}

std::vector<int> chunks_with_forward_target(const ChunkingFacts& f, int target_forward, int max_chunks) {
  const int n = static_cast<int>(f.forward.size());
  int forward_ops = 0;
  for (char c : f.forward) forward_ops += c;
  const double size = std::max(1.0, static_cast<double>(forward_ops) / std::max(1, target_forward));
  std::vector<int> begin = {0};
  std::vector<std::pair<int, int>> backward_runs;
  for (int a = 0; a < n;) {
    int b = a;
    while (b < n && f.forward[static_cast<size_t>(b)] == f.forward[static_cast<size_t>(a)]) ++b;
    if (a > 0) begin.push_back(a);
    if (f.forward[static_cast<size_t>(a)]) cut_forward_run(f, a, b, size, begin);
    else backward_runs.push_back({a, b});
    a = b;
  }
  std::vector<int> fwd_chunk_of(static_cast<size_t>(n), -1);
  for (size_t c = 0, p = 0; p < static_cast<size_t>(n); ++p) {
    while (c + 1 < begin.size() && begin[c + 1] <= static_cast<int>(p)) ++c;
    fwd_chunk_of[p] = static_cast<int>(c);
  }
  for (const auto& [a, b] : backward_runs) cut_backward_run(f, fwd_chunk_of, a, b, begin);
  std::sort(begin.begin(), begin.end());
  begin.erase(std::unique(begin.begin(), begin.end()), begin.end());
  // Non-forward chunks longer than the nodes left allow are split evenly, the longest cap found that fits.
  int forward_chunks = 0, non_forward_ops = 0;
  std::vector<int> lengths;
  for (size_t c = 0; c < begin.size(); ++c) {
    const int len = (c + 1 < begin.size() ? begin[c + 1] : n) - begin[c];
    if (f.forward[static_cast<size_t>(begin[c])]) ++forward_chunks;
    else lengths.push_back(len), non_forward_ops += len;
  }
  const int allowed = max_chunks - forward_chunks;
  if (allowed > static_cast<int>(lengths.size()) && non_forward_ops > 0) {
    int cap = std::max(1, (non_forward_ops + allowed - 1) / allowed);
    auto pieces = [&](int c) {
      int s = 0;
      for (int len : lengths) s += (len + c - 1) / c;
      return s;
    };
    while (pieces(cap) > allowed) ++cap;
    std::vector<int> split;
    for (size_t c = 0; c < begin.size(); ++c) {
      if (f.forward[static_cast<size_t>(begin[c])]) continue;
      const int a = begin[c], len = (c + 1 < begin.size() ? begin[c + 1] : n) - a;
      const int k = (len + cap - 1) / cap;
      for (int i = 1; i < k; ++i) split.push_back(a + static_cast<int>(static_cast<int64_t>(len) * i / k));
    }
    begin.insert(begin.end(), split.begin(), split.end());
    std::sort(begin.begin(), begin.end());
    begin.erase(std::unique(begin.begin(), begin.end()), begin.end());
  }
  begin.push_back(n);
  return begin;
}

}  // namespace

std::vector<int> remat_chunks(const Graph& g, const std::vector<OpId>& order, int max_chunks) {
  const int n = static_cast<int>(order.size());
  std::vector<int> begin;
  if (n <= max_chunks || n == 0) {
    for (int p = 0; p <= n; ++p) begin.push_back(p);
    return begin;
  }
  max_chunks = std::max(1, max_chunks);
  const ChunkingFacts f = chunking_facts(g, order);
  for (int target = std::max(1, (max_chunks - 1) / 2);; ) {
    begin = chunks_with_forward_target(f, target, max_chunks);
    const int over = static_cast<int>(begin.size()) - 1 - max_chunks;
    if (over <= 0 || target == 1) break;
    target = std::max(1, target - std::max(1, over / 2));
  }
  // Phases that alternate more often than max_chunks allows: the adjacent pair of least ops merged until it fits (a
  // chunk of mixed phases is not forward, and not re-run).
  while (static_cast<int>(begin.size()) - 1 > max_chunks) {
    size_t best = 1;
    for (size_t c = 1; c + 1 < begin.size(); ++c)
      if (begin[c + 1] - begin[c - 1] < begin[best + 1] - begin[best - 1]) best = c;
    begin.erase(begin.begin() + static_cast<std::ptrdiff_t>(best));
  }
  return begin;
}

RematCoarsening coarsen_remat(const Graph& g, const std::vector<OpId>& order, const std::vector<double>& op_ns,
                              const std::vector<int>& begin) {
  RematCoarsening c;
  c.begin = begin;
  c.fine_order = order;
  const int m = c.chunks();
  const size_t n = order.size(), nt = g.tensors().size();
  std::vector<int> chunk_of(n, 0);
  for (int k = 0; k < m; ++k)
    for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p) chunk_of[static_cast<size_t>(p)] = k;
  // Per tensor: the chunks touching it, in order, each with 1 (reads) | 2 (writes); its first and last position.
  std::vector<std::vector<std::pair<int, int>>> touch(nt);
  std::vector<int> first(nt, -1), last(nt, -1);
  std::vector<char> value(nt, 0);
  for (size_t p = 0; p < n; ++p) {
    const Op& o = g.op(order[p]);
    const int k = chunk_of[p];
    auto mark = [&](TensorId t, int flag) {
      auto& tc = touch[static_cast<size_t>(t)];
      if (tc.empty() || tc.back().first != k) tc.push_back({k, flag});
      else tc.back().second |= flag;
    };
    for (TensorId t : o.outputs) {  // a first use that writes and does not read makes a value (remat_problem.h)
      const auto ti = static_cast<size_t>(t);
      if (first[ti] < 0 && !g.tensor(t).persistent && !std::count(o.inputs.begin(), o.inputs.end(), t)) value[ti] = 1;
    }
    for (TensorId t : o.inputs) mark(t, 1);
    for (TensorId t : o.outputs) mark(t, 2);
    for (const auto* v : {&o.inputs, &o.outputs})
      for (TensorId t : *v) {
        if (first[static_cast<size_t>(t)] < 0) first[static_cast<size_t>(t)] = static_cast<int>(p);
        last[static_cast<size_t>(t)] = static_cast<int>(p);
      }
  }
  // Coarse tensors: one per signature (persistent, value, the chunks touching it and how). A value's maker chunk only
  // writes it (what it reads of it afterwards is inside the chunk). A value inside one chunk is in none.
  std::map<std::vector<int>, TensorId> group_of;
  std::vector<std::vector<int>> signatures;
  std::vector<int64_t> internal(n + 1, 0), escaping_made(n, 0);  // bytes by position (internal: a difference array)
  std::vector<int64_t> escaping_total(static_cast<size_t>(m), 0);
  for (size_t t = 0; t < nt; ++t) {
    const Tensor& x = g.tensor(static_cast<TensorId>(t));
    auto& tc = touch[t];
    if (tc.empty() && !x.persistent) continue;
    if (value[t]) {
      tc.front().second = 2;
      if (tc.size() == 1) {
        internal[static_cast<size_t>(first[t])] += static_cast<int64_t>(x.bytes);
        internal[static_cast<size_t>(last[t]) + 1] -= static_cast<int64_t>(x.bytes);
        continue;
      }
      escaping_made[static_cast<size_t>(first[t])] += static_cast<int64_t>(x.bytes);
      escaping_total[static_cast<size_t>(tc.front().first)] += static_cast<int64_t>(x.bytes);
    }
    std::vector<int> sig = {x.persistent ? 1 : 0, value[t] ? 1 : 0};
    for (const auto& [k, flag] : tc) sig.push_back(k * 4 + flag);
    auto [it, added] = group_of.try_emplace(sig, static_cast<TensorId>(c.members.size()));
    if (added) {
      c.members.emplace_back();
      signatures.push_back(sig);
    }
    c.members[static_cast<size_t>(it->second)].push_back(static_cast<TensorId>(t));
  }
  for (size_t i = 0; i < c.members.size(); ++i) {
    const std::vector<TensorId>& mem = c.members[i];
    Tensor t;
    const Tensor& head = g.tensor(mem.front());  // every group has a member
    t.name = head.name + (mem.size() > 1 ? " (+" + std::to_string(mem.size() - 1) + ")" : "");
    t.kind = head.kind;
    t.persistent = signatures[i][0] == 1;
    for (TensorId f : mem) t.bytes += g.tensor(f).bytes;
    c.graph.add_tensor(t);
  }
  // Each chunk's workspace: the most its inside values, its ops' workspaces and its outputs made so far hold at once,
  // beyond all its outputs (which the coarse op is counted to make before it starts).
  std::vector<Op> ops(static_cast<size_t>(m));
  int64_t live = 0;
  for (int k = 0; k < m; ++k) {
    int64_t made = 0, most = 0;
    bool all_forward = true, any_backward = false;
    for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p) {
      const Op& o = g.op(order[static_cast<size_t>(p)]);
      live += internal[static_cast<size_t>(p)];
      made += escaping_made[static_cast<size_t>(p)];
      const int64_t ws = o.workspace != kNoTensor ? static_cast<int64_t>(g.tensor(o.workspace).bytes) : 0;
      most = std::max(most, live + made + ws);
      all_forward = all_forward && o.phase == Phase::Forward;
      any_backward = any_backward || o.phase == Phase::Backward;
    }
    Op& o = ops[static_cast<size_t>(k)];
    const int a = begin[static_cast<size_t>(k)], b = begin[static_cast<size_t>(k) + 1] - 1;
    o.name = "chunk " + std::to_string(k) + " (" + g.op(order[static_cast<size_t>(a)]).name +
             (b > a ? " .. " + g.op(order[static_cast<size_t>(b)]).name : "") + ")";
    o.phase = all_forward ? Phase::Forward : any_backward ? Phase::Backward : Phase::Optimizer;
    const int64_t ws = most - escaping_total[static_cast<size_t>(k)];
    if (ws > 0) {
      Tensor w;
      w.name = "chunk " + std::to_string(k) + " workspace";
      w.kind = TensorKind::Workspace;
      w.bytes = static_cast<uint64_t>(ws);
      o.workspace = c.graph.add_tensor(w);
      c.members.emplace_back();
    }
  }
  for (size_t i = 0; i < signatures.size(); ++i)
    for (size_t j = 2; j < signatures[i].size(); ++j) {
      Op& o = ops[static_cast<size_t>(signatures[i][j] / 4)];
      if (signatures[i][j] & 1) o.inputs.push_back(static_cast<TensorId>(i));
      if (signatures[i][j] & 2) o.outputs.push_back(static_cast<TensorId>(i));
    }
  for (int k = 0; k < m; ++k) {
    c.order.push_back(c.graph.add_op(ops[static_cast<size_t>(k)]));
    double ns = 0;
    for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p)
      ns += static_cast<size_t>(p) < op_ns.size() ? op_ns[static_cast<size_t>(p)] : 0.0;
    c.op_ns.push_back(ns);
    if (ops[static_cast<size_t>(k)].phase == Phase::Forward) ++c.forward_chunks;
  }
  return c;
}

SwapPlan RematCoarsening::lower(const SwapPlan& coarse) const {
  SwapPlan fine;
  for (const Recomputation& r : coarse.recomputations) {
    Recomputation f;
    f.before = begin[static_cast<size_t>(r.before)];
    for (OpId k : r.ops)
      for (int p = begin[static_cast<size_t>(k)]; p < begin[static_cast<size_t>(k) + 1]; ++p)
        f.ops.push_back(fine_order[static_cast<size_t>(p)]);
    for (const Recomputation::Drop& d : r.drops)
      for (TensorId t : members[static_cast<size_t>(d.tensor)])
        f.drops.push_back({t, d.free_after < 0 ? -1 : begin[static_cast<size_t>(d.free_after) + 1] - 1});
    fine.recomputations.push_back(std::move(f));
  }
  return fine;
}

}  // namespace dlsim
