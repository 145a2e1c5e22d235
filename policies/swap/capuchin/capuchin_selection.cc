#include "policies/swap/capuchin/capuchin_selection.h"

#include <algorithm>
#include <limits>

#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_timeline.h"

namespace dlsim {

namespace {
constexpr size_t kHiddenProbes = 8;  // hidden swaps checked against the planned copies per peak
}  // namespace

CapuchinSelector::CapuchinSelector(const RematGraph& rg, const IterationProfile& profile,
                                 const std::vector<int>& stream_of, const CopyTimeLine& copy, uint64_t min_bytes)
    : rg_(rg), profile_(profile), stream_of_(stream_of), copy_(copy), min_bytes_(min_bytes) {
  const size_t n = static_cast<size_t>(rg.positions()), nt = rg.graph().tensors().size();
  for (uint64_t l : rg.load().load()) load_.push_back(static_cast<int64_t>(l));
  replay_extra_.assign(n, 0);
  born_bytes_.assign(n, 0);
  for (const Tensor& t : rg.graph().tensors())
    if (!t.persistent && rg.first_use(t.id) >= 0) born_bytes_[static_cast<size_t>(rg.first_use(t.id))] += t.bytes;
  off_.assign(nt, {});
  touched_.assign(nt, {});
}

uint64_t CapuchinSelector::effective(int pos) const {
  const auto p = static_cast<size_t>(pos);
  return static_cast<uint64_t>(load_[p] + std::max<int64_t>(0, replay_extra_[p]));
}

bool CapuchinSelector::off_at(TensorId t, int pos) const {
  for (const auto& [a, b] : off_[static_cast<size_t>(t)])
    if (a <= pos && pos <= b) return true;
  return false;
}

bool CapuchinSelector::touched_by_replay(TensorId t, int from, int to) const {
  for (int b : touched_[static_cast<size_t>(t)])
    if (from <= b && b <= to) return true;
  return false;
}

// The ops that recompute c.t right before c.b from tensors then on the device: its producer, after the
// producers of inputs dead by then (recursively). Fails when an input is off the device at c.b, when the
// producer's inputs change before c.b, or when a replayed op would write a tensor kept off the device there.
bool CapuchinSelector::plan_replay(Candidate& c) const {
  c.replay.clear();
  c.replay_ns = 0;
  const auto it = at_before_.find(c.b);
  const Recomputation* there = it == at_before_.end() ? nullptr : &plan_.recomputations[it->second];
  auto dropped_there = [&](TensorId o) {
    return there && std::any_of(there->drops.begin(), there->drops.end(), [&](const auto& d) { return d.tensor == o; });
  };
  bool ok = true;
  auto rec = [&](auto&& self, TensorId u) -> void {
    const int w = rg_.producer(u);
    if (w < 0 || w >= c.b || rg_.stable_until(w) < c.b) {
      ok = false;
      return;
    }
    if (std::find(c.replay.begin(), c.replay.end(), w) != c.replay.end()) return;
    for (TensorId v : rg_.op_at(w).inputs) {
      if (!ok || rg_.persistent(v)) continue;
      if (rg_.live_at(v, c.b)) ok = ok && !off_at(v, c.b);
      else self(self, v);
    }
    for (TensorId o : rg_.op_at(w).outputs)
      if (o != c.t && !rg_.persistent(o) && rg_.live_at(o, c.b) && off_at(o, c.b) && !dropped_there(o)) ok = false;
    if (!ok) return;
    c.replay.push_back(w);
    const OpId id = rg_.load().order_at(w);
    if (!there || std::find(there->ops.begin(), there->ops.end(), id) == there->ops.end()) c.replay_ns += rg_.cost(w);
  };
  rec(rec, c.t);
  if (!ok) c.replay.clear();
  return ok;
}

std::vector<CapuchinSelector::Candidate> CapuchinSelector::candidates(int peak_pos) const {
  std::vector<Candidate> out;
  for (const Tensor& t : rg_.graph().tensors()) {
    if (t.persistent || t.bytes == 0 || t.bytes < min_bytes_ || !rg_.live_at(t.id, peak_pos)) continue;
    const auto& uses = rg_.load().uses(t.id);
    const auto after = std::upper_bound(uses.begin(), uses.end(), peak_pos);
    if (after == uses.begin() || after == uses.end() || *(after - 1) == peak_pos || off_at(t.id, peak_pos)) continue;
    Candidate c;
    c.t = t.id;
    c.e = *(after - 1);
    c.b = *after;
    if (touched_by_replay(t.id, c.e + 1, c.b - 1)) continue;  // a replay in between reads or writes it
    bool gap_taken = false;  // already off the device for part of this gap (with the copy-in under way)
    for (const auto& [from, to] : off_[static_cast<size_t>(t.id)]) gap_taken = gap_taken || (from <= c.b && to > c.e);
    if (gap_taken) continue;
    const bool replay_at_b_touches = touched_by_replay(t.id, c.b, c.b);
    const TimeNs out_end = profile_.op_end[static_cast<size_t>(c.e)] + copy_.out(t.bytes);
    const TimeNs in_start = profile_.op_start[static_cast<size_t>(c.b)] - copy_.in(t.bytes);
    c.free_time = in_start - out_end;
    // Alone on the link, off the device across the peak: out by the end of the op before it, in from its end.
    c.swap_ns = std::max<TimeNs>(0, out_end - profile_.op_end[static_cast<size_t>(peak_pos - 1)]) +
                std::max<TimeNs>(0, profile_.op_end[static_cast<size_t>(peak_pos)] + copy_.in(t.bytes) -
                                        profile_.op_start[static_cast<size_t>(c.b)]);
    c.can_swap = !replay_at_b_touches;
    plan_replay(c);
    if (c.can_swap || !c.replay.empty()) out.push_back(std::move(c));
  }
  return out;
}

TimeNs CapuchinSelector::swap_stall_with(const SwapAction& a) const {
  const SwapTimeline timeline(profile_, copy_);
  auto stall = [&](const SwapPlan& p) {
    std::vector<int> last_write(p.actions.size(), -1);
    for (size_t k = 0; k < p.actions.size(); ++k) {
      const auto& w = rg_.load().writes(p.actions[k].tensor);
      const auto it = std::upper_bound(w.begin(), w.end(), p.actions[k].out_after);
      if (it != w.begin()) last_write[k] = *(it - 1);
    }
    return timeline.estimate(rg_.graph(), p, resolve_free_points(rg_.graph(), rg_.order(), stream_of_, p), last_write)
        .stall_ns;
  };
  SwapPlan with = plan_;
  with.recomputations.clear();
  const TimeNs before = stall(with);
  with.actions.push_back(a);
  return stall(with) - before;
}

// Out after the evicted-access, freed once the copy-out is done (no later than the peak); in as late as it still
// arrives before the back-access (not before the peak).
SwapAction CapuchinSelector::swap_action(const Candidate& c, int peak_pos) const {
  const uint64_t bytes = rg_.bytes(c.t);
  const TimeNs out_end = profile_.op_end[static_cast<size_t>(c.e)] + copy_.out(bytes);
  SwapAction a;
  a.tensor = c.t;
  a.out_after = c.e;
  a.in_needed_by = c.b;
  a.free_after = peak_pos - 1;
  for (int q = c.e; q < peak_pos; ++q)
    if (profile_.op_end[static_cast<size_t>(q)] >= out_end) {
      a.free_after = q;
      break;
    }
  a.in_issue_after = peak_pos;
  for (int q = c.b - 1; q > peak_pos; --q)
    if (profile_.op_end[static_cast<size_t>(q)] + copy_.in(bytes) <= profile_.op_start[static_cast<size_t>(c.b)]) {
      a.in_issue_after = q;
      break;
    }
  return a;
}

void CapuchinSelector::take_swap(const SwapAction& a) {
  const auto bytes = static_cast<int64_t>(rg_.bytes(a.tensor));
  for (int p = a.free_after + 1; p <= a.in_issue_after; ++p) load_[static_cast<size_t>(p)] -= bytes;
  off_[static_cast<size_t>(a.tensor)].push_back({a.free_after + 1, a.in_needed_by});
  plan_.actions.push_back(a);
  update_replay_peaks(a.free_after + 1, a.in_issue_after);
}

void CapuchinSelector::update_replay_peaks(int from, int to) {
  for (auto it = at_before_.lower_bound(from); it != at_before_.end() && it->first <= to; ++it) update_replay_peak(it->first);
}

void CapuchinSelector::take_recompute(const Candidate& c) {
  const uint64_t bytes = rg_.bytes(c.t);
  auto it = at_before_.find(c.b);
  if (it == at_before_.end()) {
    Recomputation r;
    r.before = c.b;
    plan_.recomputations.push_back(r);
    it = at_before_.emplace(c.b, plan_.recomputations.size() - 1).first;
  }
  Recomputation& r = plan_.recomputations[it->second];
  std::vector<OpId> ops;
  for (int w : c.replay) ops.push_back(rg_.load().order_at(w));
  for (OpId id : r.ops)
    if (std::find(ops.begin(), ops.end(), id) == ops.end()) ops.push_back(id);
  r.ops = std::move(ops);
  r.drops.push_back({c.t, c.e});
  for (int w : c.replay) {
    const Op& op = rg_.op_at(w);
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId x : *v) touched_[static_cast<size_t>(x)].push_back(c.b);
  }
  for (int p = c.e + 1; p < c.b; ++p) load_[static_cast<size_t>(p)] -= static_cast<int64_t>(bytes);
  off_[static_cast<size_t>(c.t)].push_back({c.e + 1, c.b});
  update_replay_peaks(c.e + 1, c.b);
  out_.recompute_ns += c.replay_ns;
}

// The replay before `before` as ProgramLoad counts it: from what is on the device before the op allocates
// (less the dropped tensors it brings back), each replayed op's outputs not on the device, its workspace, and
// the outputs kept only for the replay freed after their last replayed reader.
void CapuchinSelector::update_replay_peak(int before) {
  const auto it = at_before_.find(before);
  const auto b = static_cast<size_t>(before);
  if (it == at_before_.end()) return;
  const Recomputation& r = plan_.recomputations[it->second];
  auto dropped = [&](TensorId o) {
    return std::any_of(r.drops.begin(), r.drops.end(), [&](const auto& d) { return d.tensor == o; });
  };
  int64_t cur = load_[b] - static_cast<int64_t>(born_bytes_[b] + rg_.workspace_bytes(before));
  for (const auto& d : r.drops) cur -= static_cast<int64_t>(rg_.bytes(d.tensor));
  std::vector<TensorId> made;
  int64_t peak = std::numeric_limits<int64_t>::min();
  const Graph& g = rg_.graph();
  for (size_t k = 0; k < r.ops.size(); ++k) {
    const Op& w = g.op(r.ops[k]);
    for (TensorId o : w.outputs) {
      if (g.tensor(o).persistent || std::find(made.begin(), made.end(), o) != made.end()) continue;
      if (!dropped(o) && rg_.live_at(o, before) && !off_at(o, before)) continue;  // written again in place
      cur += static_cast<int64_t>(g.tensor(o).bytes);
      made.push_back(o);
    }
    peak = std::max(peak, cur + static_cast<int64_t>(w.workspace != kNoTensor ? g.tensor(w.workspace).bytes : 0));
    for (auto m = made.begin(); m != made.end();) {
      bool later = dropped(*m);
      for (size_t q = k + 1; q < r.ops.size() && !later; ++q) {
        const auto& in = g.op(r.ops[q]).inputs;
        later = std::find(in.begin(), in.end(), *m) != in.end();
      }
      if (!later) {
        cur -= static_cast<int64_t>(g.tensor(*m).bytes);
        m = made.erase(m);
      } else {
        ++m;
      }
    }
  }
  replay_extra_[b] = r.ops.empty() ? 0 : peak - load_[b];
}

CapuchinChoice CapuchinSelector::plan(uint64_t budget) {
  const int n = rg_.positions();
  for (;;) {
    int peak_pos = 0;
    for (int p = 1; p < n; ++p)
      if (effective(p) > effective(peak_pos)) peak_pos = p;
    if (n == 0 || effective(peak_pos) <= budget) break;
    std::vector<Candidate> cands = candidates(peak_pos);
    if (cands.empty()) {
      out_.shortfall_bytes = effective(peak_pos) - budget;
      break;
    }
    // Hidden swaps first, largest FreeTime first, the first few checked against the copies already planned;
    // else the most bytes per second of overhead.
    std::vector<const Candidate*> hidden;
    for (const Candidate& c : cands)
      if (c.can_swap && c.swap_ns == 0) hidden.push_back(&c);
    std::stable_sort(hidden.begin(), hidden.end(),
                     [](const Candidate* a, const Candidate* b) { return a->free_time > b->free_time; });
    std::map<TensorId, TimeNs> stall_of;  // timeline stalls of the swaps probed
    const Candidate* best = nullptr;
    bool swap = false;
    for (size_t k = 0; k < hidden.size() && k < kHiddenProbes && !best; ++k) {
      const TimeNs stall = swap_stall_with(swap_action(*hidden[k], peak_pos));
      stall_of[hidden[k]->t] = stall;
      if (stall == 0) {
        best = hidden[k];
        swap = true;
      }
    }
    if (!best) {
      double best_msps = -1;
      for (const Candidate& c : cands) {
        const auto probed = stall_of.find(c.t);
        const TimeNs swap_ns = probed != stall_of.end() ? probed->second : c.swap_ns;
        const double sw = c.can_swap ? static_cast<double>(swap_ns) : std::numeric_limits<double>::infinity();
        const double rc = c.replay.empty() ? std::numeric_limits<double>::infinity() : static_cast<double>(c.replay_ns);
        const double msps = static_cast<double>(rg_.bytes(c.t)) / std::max(1.0, std::min(sw, rc));
        if (msps > best_msps) {
          best_msps = msps;
          best = &c;
          swap = sw <= rc;
        }
      }
    }
    if (swap) {  // the stall the timeline shows for it beside the swaps already taken
      const SwapAction a = swap_action(*best, peak_pos);
      const auto probed = stall_of.find(best->t);
      const TimeNs stall = probed != stall_of.end() ? probed->second : swap_stall_with(a);
      if (!best->replay.empty() && best->replay_ns < stall) {
        swap = false;
      } else {
        out_.swap_overhead_ns += stall;
        out_.hidden_swaps += stall == 0 ? 1 : 0;
        take_swap(a);
      }
    }
    if (!swap) take_recompute(*best);
  }
  out_.plan = plan_;
  for (const Recomputation& r : plan_.recomputations) out_.replayed_ops += static_cast<int>(r.ops.size());
  out_.peak_bytes = 0;
  for (int p = 0; p < n; ++p) out_.peak_bytes = std::max(out_.peak_bytes, effective(p));
  return std::move(out_);
}

}  // namespace dlsim
