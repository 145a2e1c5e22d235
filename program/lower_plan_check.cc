// What a swap plan must satisfy before it is lowered: its actions, extra copies and recomputations are checked
// against the schedule and the tensors' uses; a violation is an std::invalid_argument naming the tensor.
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "policies/swap/core/host_step.h"
#include "policies/swap/core/program_load.h"
#include "program/internal/lowerer.h"

namespace dlsim::program_internal {

void Lowerer::check_swaps() {
  const size_t na = plan_.actions.size();
  outs_at_.assign(static_cast<size_t>(n_), {});
  frees_at_.assign(static_cast<size_t>(n_), {});
  ins_at_.assign(static_cast<size_t>(n_), {});
  needs_at_.assign(static_cast<size_t>(n_), {});
  std::map<TensorId, std::vector<std::pair<int, size_t>>> spans;  // tensor -> (out_after, action)
  for (size_t a = 0; a < na; ++a) {
    const SwapAction& x = plan_.actions[a];
    const std::string who = "swap action " + std::to_string(a);
    if (x.tensor < 0 || static_cast<size_t>(x.tensor) >= g_.tensors().size()) fail(who + ": tensor " + std::to_string(x.tensor) + " is not in the graph");
    const std::string name = who + " (tensor '" + g_.tensor(x.tensor).name + "')";
    if (!(0 <= x.out_after && x.out_after <= x.in_issue_after && x.in_issue_after < x.in_needed_by && x.in_needed_by < n_))
      fail(name + ": needs 0 <= out_after <= in_issue_after < in_needed_by < " + std::to_string(n_) + ", got " +
           std::to_string(x.out_after) + ", " + std::to_string(x.in_issue_after) + ", " + std::to_string(x.in_needed_by));
    if (x.free_after != -1 && !(x.out_after <= x.free_after && x.free_after <= x.in_issue_after))
      fail(name + ": free_after " + std::to_string(x.free_after) + " must be -1 or within out_after .. in_issue_after (" +
           std::to_string(x.out_after) + " .. " + std::to_string(x.in_issue_after) + ")");
    const auto t = static_cast<size_t>(x.tensor);
    const bool persistent = g_.tensor(x.tensor).persistent;
    if (first_[t] < 0 || (!persistent && (first_[t] > x.out_after || last_[t] < x.in_needed_by)))
      fail(name + ": the tensor is not live from out_after to in_needed_by");
    for (int i = x.out_after + 1; i < x.in_needed_by; ++i) {
      const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
      const bool used = std::count(op.inputs.begin(), op.inputs.end(), x.tensor) ||
                        std::count(op.outputs.begin(), op.outputs.end(), x.tensor);
      if (used) fail(name + ": op '" + op.name + "' at position " + std::to_string(i) + " uses it while it is on the host");
    }
    spans[x.tensor].push_back({x.out_after, a});
    outs_at_[static_cast<size_t>(x.out_after)].push_back(a);
    ins_at_[static_cast<size_t>(x.in_issue_after)].push_back(a);
    needs_at_[static_cast<size_t>(x.in_needed_by)].push_back(a);
  }
  for (auto& [t, v] : spans) {
    std::sort(v.begin(), v.end());
    std::vector<size_t> earlier;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0 && v[i].first < plan_.actions[v[i - 1].second].in_needed_by)
        fail("two swap actions of tensor '" + g_.tensor(t).name + "' overlap");
      check_copy_out(v[i].second, earlier);
      earlier.push_back(v[i].second);
    }
  }
  // Copy-ins issued after the same op go in the order they are needed (one H2D stream serves them in turn).
  for (auto& v : ins_at_)
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return plan_.actions[a].in_needed_by < plan_.actions[b].in_needed_by; });
  free_point_ = resolve_free_points(g_, s_.order, s_.stream_of, plan_);
  for (size_t a = 0; a < na; ++a) frees_at_[static_cast<size_t>(free_point_[a])].push_back(a);
  check_recomputations();
  check_extra_copies();
}

// An action that drops its tensor without copying it needs a host copy that is still current: a copy-out (an
// earlier action's, or a to-host ExtraCopy) with no write to the tensor after it.
void Lowerer::check_copy_out(size_t a, const std::vector<size_t>& earlier) {
  const SwapAction& x = plan_.actions[a];
  if (x.copy_out) return;
  int copied_at = -1;  // the data on the host is the tensor as it was after this position
  for (size_t b : earlier) copied_at = std::max(copied_at, plan_.actions[b].in_needed_by - 1);
  for (const ExtraCopy& c : plan_.copies)
    if (c.tensor == x.tensor && c.to_host && c.pos <= x.out_after) copied_at = std::max(copied_at, c.pos);
  const std::string name = "swap action " + std::to_string(a) + " (tensor '" + g_.tensor(x.tensor).name + "')";
  if (copied_at < 0) fail(name + ": copy_out is false but no earlier copy put the tensor on the host");
  for (int i = copied_at + 1; i <= x.out_after; ++i) {
    const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
    if (std::count(op.outputs.begin(), op.outputs.end(), x.tensor))
      fail(name + ": copy_out is false but op '" + op.name + "' at position " + std::to_string(i) +
           " writes the tensor after its host copy was made");
  }
}

// An ExtraCopy moves data of a tensor that is on the device: live at its position and not swapped out there.
void Lowerer::check_extra_copies() {
  extra_before_.assign(static_cast<size_t>(n_), {});
  extra_after_.assign(static_cast<size_t>(n_), {});
  for (size_t i = 0; i < plan_.copies.size(); ++i) {
    const ExtraCopy& c = plan_.copies[i];
    const std::string who = "extra copy " + std::to_string(i);
    if (c.tensor < 0 || static_cast<size_t>(c.tensor) >= g_.tensors().size()) fail(who + ": tensor " + std::to_string(c.tensor) + " is not in the graph");
    if (c.pos < 0 || c.pos >= n_) fail(who + ": position " + std::to_string(c.pos) + " outside 0.." + std::to_string(n_ - 1));
    const auto t = static_cast<size_t>(c.tensor);
    const std::string name = who + " (tensor '" + g_.tensor(c.tensor).name + "')";
    if (first_[t] < 0 || (!g_.tensor(c.tensor).persistent && (c.pos < first_[t] || c.pos > last_[t])))
      fail(name + ": the tensor is not live at position " + std::to_string(c.pos));
    for (size_t a = 0; a < plan_.actions.size(); ++a)
      if (plan_.actions[a].tensor == c.tensor && free_point_[a] < c.pos && c.pos <= plan_.actions[a].in_issue_after)
        fail(name + ": the tensor is on the host at position " + std::to_string(c.pos));
    if (auto it = dropped_.find(c.tensor); it != dropped_.end())
      for (const auto& [from, to] : it->second)
        // A drop's gap ends with the replay before op `to`: after that op (a copy to the host) it is back.
        if (from <= c.pos && (c.to_host ? c.pos < to : c.pos <= to))
          fail(name + ": the tensor is dropped at position " + std::to_string(c.pos));
    (c.to_host ? extra_after_ : extra_before_)[static_cast<size_t>(c.pos)].push_back(i);
  }
}

// A recomputation's ops ran before it, write no non-persistent tensor they read, and write every tensor it drops;
// each drop frees a tensor that is used before the replay, not in the gap, and again at or after it; each held
// tensor is made before the replay and not dropped by it.
void Lowerer::check_recomputations() {
  replays_at_.assign(static_cast<size_t>(n_), {});
  drops_at_.assign(static_cast<size_t>(n_), {});
  const std::vector<std::vector<int>> points = resolve_drop_points(g_, s_.order, plan_);
  const size_t nt = g_.tensors().size();
  for (size_t r = 0; r < plan_.recomputations.size(); ++r) {
    const Recomputation& rc = plan_.recomputations[r];
    const std::string who = "recomputation " + std::to_string(r);
    if (rc.before < 1 || rc.before >= n_)
      fail(who + ": before " + std::to_string(rc.before) + " is outside 1.." + std::to_string(n_ - 1));
    if (rc.ops.empty()) fail(who + ": re-runs no op");
    for (OpId o : rc.ops) {
      if (o < 0 || static_cast<size_t>(o) >= g_.ops().size()) fail(who + ": op " + std::to_string(o) + " is not in the graph");
      const Op& op = g_.op(o);
      if (pos_of_[static_cast<size_t>(o)] >= rc.before)
        fail(who + ": op '" + op.name + "' runs at position " + std::to_string(pos_of_[static_cast<size_t>(o)]) +
             ", not before position " + std::to_string(rc.before) + " (a replay re-runs ops that ran)");
      for (TensorId t : op.outputs)  // in place: only on a tensor an earlier op of the replay made again
        if (!g_.tensor(t).persistent && std::count(op.inputs.begin(), op.inputs.end(), t) &&
            !std::any_of(rc.ops.begin(), std::find(rc.ops.begin(), rc.ops.end(), o), [&](OpId e) {
              return std::count(g_.op(e).outputs.begin(), g_.op(e).outputs.end(), t) > 0;
            }))
          fail(who + ": op '" + op.name + "' writes tensor '" + g_.tensor(t).name +
               "', which it reads, and no op before it in the replay makes the tensor again (an in-place op re-run alone "
               "would apply twice)");
    }
    for (size_t d = 0; d < rc.drops.size(); ++d) {
      const TensorId t = rc.drops[d].tensor;
      if (t < 0 || static_cast<size_t>(t) >= nt) fail(who + ": drop of tensor " + std::to_string(t) + ", not in the graph");
      const std::string name = who + " (tensor '" + g_.tensor(t).name + "')";
      if (g_.tensor(t).persistent) fail(name + ": a persistent tensor cannot be dropped and recomputed");
      const bool written = std::any_of(rc.ops.begin(), rc.ops.end(), [&](OpId o) {
        return std::count(g_.op(o).outputs.begin(), g_.op(o).outputs.end(), t) > 0;
      });
      if (!written) fail(name + ": no op it re-runs writes the tensor");
      const int at = points[r][d];
      const auto ti = static_cast<size_t>(t);
      if (at < 0 || at < first_[ti] || at >= rc.before)
        fail(name + ": the tensor is not live after position " + std::to_string(at) + " to be dropped before position " +
             std::to_string(rc.before));
      if (last_[ti] < rc.before)
        fail(name + ": nothing uses the tensor at or after position " + std::to_string(rc.before) + ", where it is recomputed");
      for (int i = at + 1; i < rc.before; ++i) {
        const Op& op = g_.op(s_.order[static_cast<size_t>(i)]);
        if (std::count(op.inputs.begin(), op.inputs.end(), t) || std::count(op.outputs.begin(), op.outputs.end(), t))
          fail(name + ": op '" + op.name + "' at position " + std::to_string(i) + " uses it while it is dropped");
      }
      dropped_[t].push_back({at + 1, rc.before});
      drops_at_[static_cast<size_t>(at)].push_back({r, d});
    }
    for (TensorId t : rc.held) {  // selective checkpointing's cache: made before the replay, never dropped by it
      if (t < 0 || static_cast<size_t>(t) >= nt) fail(who + ": holds tensor " + std::to_string(t) + ", not in the graph");
      const std::string name = who + " (held tensor '" + g_.tensor(t).name + "')";
      if (g_.tensor(t).persistent) fail(name + ": a persistent tensor is on the device anyway");
      if (first_[static_cast<size_t>(t)] < 0 || first_[static_cast<size_t>(t)] >= rc.before)
        fail(name + ": the tensor is not made before position " + std::to_string(rc.before));
      if (std::any_of(rc.drops.begin(), rc.drops.end(), [&](const Recomputation::Drop& d) { return d.tensor == t; }))
        fail(name + ": the recomputation both holds and drops it");
    }
    replays_at_[static_cast<size_t>(rc.before)].push_back(r);
  }
  for (auto& [t, v] : dropped_) {
    std::sort(v.begin(), v.end());
    for (size_t i = 1; i < v.size(); ++i)
      if (v[i].first <= v[i - 1].second) fail("two drops of tensor '" + g_.tensor(t).name + "' overlap");
    for (size_t a = 0; a < plan_.actions.size(); ++a) {
      if (plan_.actions[a].tensor != t) continue;
      const int from = free_point_[a] + 1, to = plan_.actions[a].in_needed_by;
      for (const auto& [f, e] : v)
        if (f <= to && from <= e)
          fail("tensor '" + g_.tensor(t).name + "' is both swapped (positions " + std::to_string(from) + ".." +
               std::to_string(to) + ") and dropped (" + std::to_string(f) + ".." + std::to_string(e) + ")");
    }
  }
}

}  // namespace dlsim::program_internal
