#include "policies/swap/core/saved_bytes.h"

#include <algorithm>
#include <utility>

#include "common/config_error.h"
#include "policies/swap/core/program_load.h"

namespace dlsim {

SavedBytes saved_bytes(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan) {
  SavedBytes out;
  const int n = static_cast<int>(order.size());
  int first_backward = -1;
  for (int p = 0; p < n && first_backward < 0; ++p)
    if (g.op(order[static_cast<size_t>(p)]).phase == Phase::Backward) first_backward = p;
  if (first_backward < 0) return out;
  const int b = first_backward;

  const size_t nt = g.tensors().size();
  std::vector<char> counted(nt, 0);  // a non-persistent activation a forward op writes
  std::vector<std::vector<int>> uses(nt);  // positions of ordinary uses, ascending
  for (int p = 0; p < n; ++p) {
    const Op& o = g.op(order[static_cast<size_t>(p)]);
    for (TensorId t : o.inputs) uses[static_cast<size_t>(t)].push_back(p);
    for (TensorId t : o.outputs) {
      uses[static_cast<size_t>(t)].push_back(p);
      const Tensor& x = g.tensor(t);
      if (o.phase == Phase::Forward && x.kind == TensorKind::Activation && !x.persistent) counted[static_cast<size_t>(t)] = 1;
    }
  }
  for (auto& u : uses) u.erase(std::unique(u.begin(), u.end()), u.end());  // ascending already

  // Each tensor's last use, replays' reads included; its gaps (drop point, before).
  std::vector<int> last(nt, -1);
  for (size_t t = 0; t < nt; ++t)
    if (!uses[t].empty()) last[t] = uses[t].back();
  std::vector<std::vector<std::pair<int, int>>> gaps(nt);
  for (const Recomputation& r : plan.recomputations) {
    if (r.before < 0 || r.before >= n)
      throw ConfigError(g.name, 0, "recomputation", "a recomputation runs before position " + std::to_string(r.before) +
                                                        ", outside the order's 0.." + std::to_string(n - 1));
    std::vector<char> made(nt, 0);
    for (OpId id : r.ops) {
      const Op& o = g.op(id);
      for (TensorId t : o.inputs)  // a held tensor's replay reads are in its release below
        if (!made[static_cast<size_t>(t)] && !std::count(r.held.begin(), r.held.end(), t))
          last[static_cast<size_t>(t)] = std::max(last[static_cast<size_t>(t)], r.before);
      for (TensorId t : o.outputs) made[static_cast<size_t>(t)] = 1;
    }
    // Selective checkpointing's cache holds them until the replay; one the replay lets go before its last op
    // (held_release) is gone by the replay's end, where its recomputed tensors are all back.
    const std::vector<int> release = held_release(g, order, r);
    for (size_t h = 0; h < r.held.size(); ++h) {
      const TensorId t = r.held[h];
      if (t < 0 || static_cast<size_t>(t) >= nt) continue;
      const bool to_end = release[h] + 1 >= static_cast<int>(r.ops.size());
      last[static_cast<size_t>(t)] = std::max(last[static_cast<size_t>(t)], to_end ? r.before : r.before - 1);
    }
    for (const Recomputation::Drop& d : r.drops) {
      const auto& u = uses.at(static_cast<size_t>(d.tensor));
      int point = d.free_after;
      if (point < 0) {
        auto it = std::lower_bound(u.begin(), u.end(), r.before);
        point = it == u.begin() ? -1 : *std::prev(it);
      }
      if (point < 0) continue;  // never on the device before: nothing leaves (the lowering rejects such a plan)
      gaps[static_cast<size_t>(d.tensor)].push_back({point, r.before});
      last[static_cast<size_t>(d.tensor)] = std::max(last[static_cast<size_t>(d.tensor)], r.before);
    }
  }

  // Residency intervals [a, e] -> the count per backward position (a difference array) and the boundary figure.
  std::vector<int64_t> delta(static_cast<size_t>(n) + 1, 0);
  for (size_t t = 0; t < nt; ++t) {
    if (!counted[t] || uses[t].empty()) continue;
    const uint64_t bytes = g.tensor(static_cast<TensorId>(t)).bytes;
    auto interval = [&](int a, int e) {
      if (e < b || e < a) return;
      if (a < b) out.saved_for_backward_bytes += bytes;  // alive as the forward pass ends, needed later
      const int lo = std::max(a, b);
      delta[static_cast<size_t>(lo)] += static_cast<int64_t>(bytes);
      delta[static_cast<size_t>(e) + 1] -= static_cast<int64_t>(bytes);
    };
    auto& gs = gaps[t];
    std::sort(gs.begin(), gs.end());
    int start = uses[t].front();
    for (const auto& [point, before] : gs) {
      interval(start, point);
      start = before;
    }
    interval(start, last[t]);
  }
  int64_t live = 0;
  for (int p = 0; p < n; ++p) {
    live += delta[static_cast<size_t>(p)];
    if (p >= b && static_cast<uint64_t>(live) > out.backward_peak_saved_bytes) {
      out.backward_peak_saved_bytes = static_cast<uint64_t>(live);
      out.peak_position = p;
    }
  }
  if (out.peak_position < 0) out.peak_position = b;
  return out;
}

}  // namespace dlsim
