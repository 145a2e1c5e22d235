#include "policies/swap/swapadvisor/swapadvisor_selection.h"

#include <algorithm>
#include <limits>

namespace dlsim {

SizeClasses size_classes(const Graph& g, const ProgramLoad& load, uint64_t min_bytes, int max_classes) {
  SizeClasses sc;
  sc.class_of.assign(g.tensors().size(), -1);
  std::vector<uint64_t> sizes;
  for (const Tensor& t : g.tensors())
    if (t.bytes >= min_bytes && t.kind != TensorKind::Workspace && !load.uses(t.id).empty()) sizes.push_back(t.bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  const size_t k = std::min(sizes.size(), static_cast<size_t>(std::max(1, max_classes)));
  for (size_t c = 0; c < k; ++c) sc.slot_bytes.push_back(sizes[(c + 1) * sizes.size() / k - 1]);
  for (const Tensor& t : g.tensors()) {
    if (t.bytes < min_bytes || t.kind == TensorKind::Workspace || load.uses(t.id).empty()) continue;
    sc.class_of[static_cast<size_t>(t.id)] =
        static_cast<int>(std::lower_bound(sc.slot_bytes.begin(), sc.slot_bytes.end(), t.bytes) - sc.slot_bytes.begin());
  }
  const int n = load.positions();
  sc.persistent.assign(k, 0);
  sc.peak_resident.assign(k, 0);
  std::vector<std::vector<int>> diff(k, std::vector<int>(static_cast<size_t>(n) + 1, 0));
  std::vector<int64_t> unmanaged(static_cast<size_t>(n) + 1, 0);
  for (const Tensor& t : g.tensors()) {
    const int c = sc.class_of[static_cast<size_t>(t.id)];
    const auto& u = load.uses(t.id);
    if (c >= 0 && t.persistent) ++sc.persistent[static_cast<size_t>(c)];
    if (c < 0 || t.persistent || u.empty()) continue;
    ++diff[static_cast<size_t>(c)][static_cast<size_t>(u.front())];
    --diff[static_cast<size_t>(c)][static_cast<size_t>(u.back()) + 1];
  }
  sc.least_slots = sc.persistent;
  for (int i = 0; i < n; ++i) {
    const Op& op = g.op(load.order_at(i));
    std::vector<int> per(k, 0);
    std::vector<TensorId> seen;
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v)
        if (sc.class_of[static_cast<size_t>(t)] >= 0 && std::find(seen.begin(), seen.end(), t) == seen.end()) {
          seen.push_back(t);
          ++per[static_cast<size_t>(sc.class_of[static_cast<size_t>(t)])];
        }
    for (size_t c = 0; c < k; ++c) sc.least_slots[c] = std::max(sc.least_slots[c], per[c]);
  }
  for (size_t c = 0; c < k; ++c) {
    int run = sc.persistent[c];
    for (int i = 0; i < n; ++i) {
      run += diff[c][static_cast<size_t>(i)];
      sc.peak_resident[c] = std::max(sc.peak_resident[c], run);
    }
  }
  // unmanaged bytes at i: the load less the managed tensors live there
  std::vector<int64_t> managed(static_cast<size_t>(n) + 1, 0);
  for (const Tensor& t : g.tensors()) {
    if (sc.class_of[static_cast<size_t>(t.id)] < 0) continue;
    const auto& u = load.uses(t.id);
    const int from = t.persistent ? 0 : u.front(), to = t.persistent ? n - 1 : u.back();
    managed[static_cast<size_t>(from)] += static_cast<int64_t>(t.bytes);
    managed[static_cast<size_t>(to) + 1] -= static_cast<int64_t>(t.bytes);
  }
  int64_t run = 0;
  for (int i = 0; i < n; ++i) {
    run += managed[static_cast<size_t>(i)];
    sc.unmanaged_peak = std::max(sc.unmanaged_peak, load.load()[static_cast<size_t>(i)] - static_cast<uint64_t>(run));
  }
  return sc;
}

SlotPlan plan_with_slots(const Graph& g, const std::vector<OpId>& order, const SizeClasses& sc,
                         const std::vector<int>& slots, uint64_t limit) {
  SlotPlan out;
  uint64_t slot_total = sc.unmanaged_peak;
  for (size_t c = 0; c < slots.size(); ++c) slot_total += static_cast<uint64_t>(slots[c]) * sc.slot_bytes[c];
  if (slot_total > limit) {
    out.why = "the slots and the unmanaged tensors exceed the limit";
    return out;
  }
  const ProgramLoad load(g, order);
  const int n = load.positions();
  const size_t nt = g.tensors().size(), k = slots.size();
  auto next_use = [&](TensorId t, int after) {
    const auto& u = load.uses(t);
    auto it = std::upper_bound(u.begin(), u.end(), after);
    return it == u.end() ? std::numeric_limits<int>::max() : *it;
  };
  enum class State : uint8_t { Absent, Resident, Evicted, Prefetched };
  std::vector<State> st(nt, State::Absent);
  std::vector<int> used(k, 0);
  std::vector<size_t> action_of(nt, 0);      // the open action of an evicted or prefetched tensor
  std::vector<int> host_copy_at(nt, -1);     // position after which the host copy is current (-1: none)
  std::vector<std::vector<TensorId>> evicted(k), resident(k);  // resident: Resident or Prefetched
  for (const Tensor& t : g.tensors())
    if (t.persistent && sc.class_of[static_cast<size_t>(t.id)] >= 0) {
      st[static_cast<size_t>(t.id)] = State::Resident;
      const auto c = static_cast<size_t>(sc.class_of[static_cast<size_t>(t.id)]);
      ++used[c];
      resident[c].push_back(t.id);
    }
  auto leave = [&](size_t c, TensorId t) { resident[c].erase(std::find(resident[c].begin(), resident[c].end(), t)); };
  for (size_t c = 0; c < k; ++c)
    if (used[c] > slots[c]) {
      out.why = "the persistent tensors alone overflow a class";
      return out;
    }
  for (int p = 0; p < n; ++p) {
    const Op& op = g.op(order[static_cast<size_t>(p)]);
    std::vector<TensorId> need;
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v)
        if (sc.class_of[static_cast<size_t>(t)] >= 0 && std::find(need.begin(), need.end(), t) == need.end()) need.push_back(t);
    for (TensorId t : need) {
      const auto ti = static_cast<size_t>(t);
      const auto c = static_cast<size_t>(sc.class_of[ti]);
      if (st[ti] == State::Resident || st[ti] == State::Prefetched) {
        st[ti] = State::Resident;
        continue;
      }
      if (used[c] == slots[c]) {  // evict the resident tensor of the class used furthest ahead
        TensorId victim = kNoTensor;
        int far = -1;
        for (TensorId v : resident[c]) {
          if (std::find(need.begin(), need.end(), v) != need.end()) continue;
          const int nu = next_use(v, p - 1);
          if (nu == std::numeric_limits<int>::max()) continue;  // no later use this iteration: it stays
          if (load.uses(v).front() > p - 1) continue;  // a persistent tensor not used yet this iteration stays too
          if (nu > far) {
            far = nu;
            victim = v;
          }
        }
        if (victim == kNoTensor) {
          out.why = "op '" + op.name + "' finds nothing to evict in a class";
          return out;
        }
        const auto vi = static_cast<size_t>(victim);
        if (st[vi] == State::Prefetched) {  // its early swap-in is taken back: it waits for a later free slot
          out.plan.actions[action_of[vi]].in_issue_after = out.plan.actions[action_of[vi]].in_needed_by - 1;
        } else {
          const auto& u = load.uses(victim);
          const int last = *(std::upper_bound(u.begin(), u.end(), p - 1) - 1);
          SwapAction a;
          a.tensor = victim;
          a.out_after = last;
          a.free_after = p - 1;
          a.in_needed_by = far;
          a.in_issue_after = far - 1;  // until prefetched earlier
          int lw = -1;
          for (int w : load.writes(victim))
            if (w <= last) lw = w;
          a.copy_out = !(host_copy_at[vi] >= 0 && lw <= host_copy_at[vi]);
          host_copy_at[vi] = last;  // the host copy is the tensor as it was after its last use
          action_of[vi] = out.plan.actions.size();
          out.plan.actions.push_back(a);
        }
        st[vi] = State::Evicted;
        evicted[c].push_back(victim);
        leave(c, victim);
        --used[c];
      }
      if (st[ti] == State::Evicted)  // needed now and not prefetched: fetched on demand
        evicted[c].erase(std::find(evicted[c].begin(), evicted[c].end(), t));
      st[ti] = State::Resident;
      resident[c].push_back(t);
      ++used[c];
    }
    for (TensorId t : need) {  // last use: the slot is free again
      const auto ti = static_cast<size_t>(t);
      if (!g.tensor(t).persistent && next_use(t, p) == std::numeric_limits<int>::max()) {
        st[ti] = State::Absent;
        const auto c = static_cast<size_t>(sc.class_of[ti]);
        leave(c, t);
        --used[c];
      }
    }
    for (size_t c = 0; c < k; ++c) {  // early swap-in into free slots, nearest next use first
      std::sort(evicted[c].begin(), evicted[c].end(), [&](TensorId x, TensorId y) {
        return out.plan.actions[action_of[static_cast<size_t>(x)]].in_needed_by <
               out.plan.actions[action_of[static_cast<size_t>(y)]].in_needed_by;
      });
      while (used[c] < slots[c] && !evicted[c].empty()) {
        const TensorId t = evicted[c].front();
        SwapAction& a = out.plan.actions[action_of[static_cast<size_t>(t)]];
        if (a.free_after >= p || a.in_needed_by <= p) break;
        a.in_issue_after = p;
        st[static_cast<size_t>(t)] = State::Prefetched;
        resident[c].push_back(t);
        evicted[c].erase(evicted[c].begin());
        ++used[c];
      }
    }
  }
  out.feasible = true;
  return out;
}

}  // namespace dlsim
