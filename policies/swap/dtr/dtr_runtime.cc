#include "policies/swap/dtr/dtr_runtime.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dlsim {
namespace {

class DtrPass {
 public:
  DtrPass(const RematGraph& rg, uint64_t budget, DtrHeuristicKind kind, DtrLimits limits)
      : rg_(rg), g_(rg.graph()), budget_(budget), limits_(limits), where_(g_.tensors().size(), Residency::Unborn),
        heuristic_(rg, kind, where_, limits.cache_full_scores) {
    const size_t nt = g_.tensors().size(), n = static_cast<size_t>(rg.positions());
    evicted_after_.assign(nt, -1);
    last_access_.assign(nt, 0);
    pin_.assign(nt, -1);
    seen_.assign(nt, 0);
    wanted_.assign(nt, 0);
    kept_.assign(nt, 0);
    made_.assign(nt, 0);
    refused_for_use_.assign(nt, kNoUse);
    pool_index_.assign(nt, -1);
    born_at_.assign(n, {});
    dies_at_.assign(n, {});
    for (const Tensor& t : g_.tensors()) {
      if (t.persistent) {
        resident_bytes_ += t.bytes;
        continue;
      }
      if (rg.first_use(t.id) < 0) continue;
      born_at_[static_cast<size_t>(rg.first_use(t.id))].push_back(t.id);
      dies_at_[static_cast<size_t>(rg.last_use(t.id))].push_back(t.id);
    }
    out_.least = least_step_bytes(rg);
    aim_ = std::max(budget_, out_.least.bytes);
    last_reader_.assign(nt, {0, 0});
  }

  DtrRun run() {
    for (int i = 0; i < rg_.positions(); ++i) step(i);
    return std::move(out_);
  }

 private:
  // Plans the replays that bring the evicted inputs of op i back, evicts until the step fits, commits.
  void step(int i) {
    const Op& op = rg_.op_at(i);
    plan_replays(op, i);
    for (int w : replay_) pin_op(rg_.op_at(w), i);
    pin_op(op, i);
    keep(evicted_outs_.size());
    uint64_t peak = step_peak(i);
    const uint64_t evictable = unpinned_bytes(i);  // the same ops run whatever stays: the same pins
    // Past the cap nothing more is evicted and every recomputed tensor stays (DTR's own rematerialisation): each
    // evicted tensor then comes back once, so the replays left are bounded by what was evicted.
    const bool capped = limits_.replay_cap > 0 && out_.replayed_ops >= limits_.replay_cap;
    if (capped && peak > aim_ && !out_.replay_cap_reached) {
      out_.replay_cap_reached = true;
      out_.evictions_stopped_at = i;
    }
    if (!capped && peak > aim_ && !replay_.empty() && peak - evictable > aim_) {
      // Out of reach with every recomputed tensor kept. If keeping only the op's own inputs brings it in reach,
      // keep those and, of the others, as many as still fit, the soonest needed first; the rest are freed after
      // their last replayed reader and stay evicted (as DTR would evict them once unlocked).
      std::stable_sort(others_.begin(), others_.end(), [&](TensorId a, TensorId b) {
        return rg_.next_use(a, i) < rg_.next_use(b, i);
      });
      auto fits = [&](size_t n) {
        keep(n);
        const uint64_t p = step_peak(i);
        return p - std::min(p, evictable) <= aim_;
      };
      if (fits(0)) {
        size_t lo = 0, hi = others_.size();  // fits(lo); more kept never needs fewer bytes
        while (lo < hi) {
          const size_t mid = (lo + hi + 1) / 2;
          if (fits(mid)) lo = mid;
          else hi = mid - 1;
        }
        keep(lo);
      } else {  // out of reach anyway: DTR's own rematerialisation, and the excess reported
        keep(others_.size());
      }
      peak = step_peak(i);
    }
    // aim_: the budget, or above it what the iteration cannot go under (least_step_bytes, or a step before that
    // could not): evicting below it would cost replays and lower no peak.
    while (peak > aim_ && !capped) {
      const TensorId t = i > 0 ? cheapest_evictable(i) : kNoTensor;
      if (t == kNoTensor) {
        aim_ = std::max(aim_, peak);
        break;
      }
      evict(t, i - 1);
      peak -= rg_.bytes(t);
    }
    if (peak > budget_) out_.shortfall_bytes = std::max(out_.shortfall_bytes, peak - budget_);
    out_.peak_bytes = std::max(out_.peak_bytes, peak);
    commit(i);
  }

  Residency where(TensorId t) const { return where_[static_cast<size_t>(t)]; }
  void pin_op(const Op& op, int i) {
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v) pin_[static_cast<size_t>(t)] = i;
  }

  // The replays that bring op i's evicted inputs back, and the evicted tensors they write: op i's inputs, then
  // the others (others_).
  void plan_replays(const Op& op, int i) {
    ++stamp_;
    replay_.clear();
    evicted_outs_.clear();
    others_.clear();
    for (TensorId v : op.inputs) wanted_[static_cast<size_t>(v)] = stamp_;
    for (TensorId v : op.inputs)
      if (where(v) == Residency::Evicted) materialise(v, i);
    for (TensorId o : evicted_outs_)
      if (wanted_[static_cast<size_t>(o)] != stamp_) others_.push_back(o);
  }

  // Brings `u` onto the device before op i: its producer replayed after the inputs it lacks.
  void materialise(TensorId u, int i) {
    if (rg_.persistent(u) || where(u) == Residency::Resident || seen_[static_cast<size_t>(u)] == stamp_) return;
    const int w = rg_.producer(u);
    if (w < 0 || w >= i) throw std::logic_error("dtr: tensor " + g_.tensor(u).name + " cannot be recomputed");
    for (TensorId v : rg_.op_at(w).inputs) materialise(v, i);
    if (seen_[static_cast<size_t>(u)] == stamp_) return;  // an input's replay wrote it too
    replay_.push_back(w);
    for (TensorId o : rg_.op_at(w).outputs) {
      if (rg_.persistent(o) || where(o) == Residency::Resident || seen_[static_cast<size_t>(o)] == stamp_) continue;
      seen_[static_cast<size_t>(o)] = stamp_;
      if (where(o) == Residency::Evicted) evicted_outs_.push_back(o);
    }
  }

  // The evicted tensors the replays bring back to stay: op i's inputs and the first n of others_ (DTR's
  // rematerialisation keeps them all); the rest are replay-only.
  void keep(size_t n) {
    ++keep_stamp_;
    for (TensorId o : evicted_outs_)
      if (wanted_[static_cast<size_t>(o)] == stamp_) kept_[static_cast<size_t>(o)] = keep_stamp_;
    for (size_t k = 0; k < n && k < others_.size(); ++k) kept_[static_cast<size_t>(others_[k])] = keep_stamp_;
    restored_.clear();
    for (TensorId o : evicted_outs_)
      if (kept_[static_cast<size_t>(o)] == keep_stamp_) restored_.push_back(o);
  }

  // Bytes of the resident tensors DTR could still evict before op i (recomputability aside).
  uint64_t unpinned_bytes(int i) const {
    uint64_t b = 0;
    for (TensorId t : pool_)
      if (pin_[static_cast<size_t>(t)] != i) b += rg_.bytes(t);
    return b;
  }

  // Live bytes at the worst moment of step i: during a replay or during op i itself.
  uint64_t step_peak(int i) {
    const int k_end = static_cast<int>(replay_.size());
    // Replay outputs that are not staying (neither resident nor restored) are freed after their last replay reader
    // (or after the replay that makes them, when no later one reads them).
    auto staying = [&](TensorId o) {
      return rg_.persistent(o) || where(o) == Residency::Resident || kept_[static_cast<size_t>(o)] == keep_stamp_;
    };
    ++reader_stamp_;
    for (int q = 0; q < k_end; ++q)
      for (TensorId v : rg_.op_at(replay_[static_cast<size_t>(q)]).inputs)
        last_reader_[static_cast<size_t>(v)] = {reader_stamp_, q};  // ascending q: the last reader stays
    freed_bytes_after_.assign(static_cast<size_t>(k_end), 0);
    for (int k = 0; k < k_end; ++k)
      for (TensorId o : rg_.op_at(replay_[static_cast<size_t>(k)]).outputs)
        if (!staying(o)) {
          const auto& r = last_reader_[static_cast<size_t>(o)];
          const int last = r.first == reader_stamp_ ? std::max(k, r.second) : k;
          freed_bytes_after_[static_cast<size_t>(last)] += rg_.bytes(o);
        }
    ++made_stamp_;
    uint64_t cur = resident_bytes_, peak = 0;
    for (int k = 0; k < k_end; ++k) {
      const int w = replay_[static_cast<size_t>(k)];
      for (TensorId o : rg_.op_at(w).outputs)
        if (!rg_.persistent(o) && where(o) != Residency::Resident && made_[static_cast<size_t>(o)] != made_stamp_) {
          made_[static_cast<size_t>(o)] = made_stamp_;
          cur += rg_.bytes(o);
        }
      peak = std::max(peak, cur + rg_.workspace_bytes(w));
      cur -= freed_bytes_after_[static_cast<size_t>(k)];
    }
    for (TensorId t : born_at_[static_cast<size_t>(i)]) cur += rg_.bytes(t);
    return std::max(peak, cur + rg_.workspace_bytes(i));
  }

  // The resident tensor with the lowest h = c / (m * s) that may be evicted before op i (ties: the lower id).
  // The scores do not change while candidates are turned down (not recomputable where next used), so they are
  // scored once into a heap and taken in order, not rescanned after each refusal (quadratic on a step where
  // most are refused).
  TensorId cheapest_evictable(int i) {
    candidates_.clear();
    for (TensorId t : pool_) {
      if (pin_[static_cast<size_t>(t)] == i) continue;
      // Whether t can be recomputed where it is next used depends on the graph alone: a refusal holds at every
      // step until that use (without this, a step where most are refused rescans deep chains for each).
      if (refused_for_use_[static_cast<size_t>(t)] == rg_.next_use(t, i)) continue;
      const double staleness = static_cast<double>(now_ - last_access_[static_cast<size_t>(t)]) + 1.0;
      const double h = heuristic_.cost(t) / (static_cast<double>(std::max<uint64_t>(1, rg_.bytes(t))) * staleness);
      candidates_.emplace_back(h, t);
    }
    const auto later = [](const std::pair<double, TensorId>& a, const std::pair<double, TensorId>& b) {
      return a.first > b.first || (a.first == b.first && a.second > b.second);
    };
    std::make_heap(candidates_.begin(), candidates_.end(), later);
    while (!candidates_.empty()) {
      std::pop_heap(candidates_.begin(), candidates_.end(), later);
      const TensorId best = candidates_.back().second;
      candidates_.pop_back();
      const int use = rg_.next_use(best, i);
      if (rg_.recomputable_at(best, use)) return best;
      refused_for_use_[static_cast<size_t>(best)] = use;
    }
    return kNoTensor;
  }

  void pool_add(TensorId t) {
    if (rg_.producer(t) < 0) return;
    pool_index_[static_cast<size_t>(t)] = static_cast<int>(pool_.size());
    pool_.push_back(t);
  }
  void pool_remove(TensorId t) {
    const int at = pool_index_[static_cast<size_t>(t)];
    if (at < 0) return;
    pool_[static_cast<size_t>(at)] = pool_.back();
    pool_index_[static_cast<size_t>(pool_.back())] = at;
    pool_.pop_back();
    pool_index_[static_cast<size_t>(t)] = -1;
  }

  void evict(TensorId t, int free_after) {
    where_[static_cast<size_t>(t)] = Residency::Evicted;
    evicted_after_[static_cast<size_t>(t)] = free_after;
    resident_bytes_ -= rg_.bytes(t);
    pool_remove(t);
    heuristic_.left_device(t);
    ++out_.evictions;
  }

  void commit(int i) {
    if (!replay_.empty()) {
      Recomputation r;
      r.before = i;
      for (TensorId t : restored_) {
        r.drops.push_back({t, evicted_after_[static_cast<size_t>(t)]});
        where_[static_cast<size_t>(t)] = Residency::Resident;
        resident_bytes_ += rg_.bytes(t);
        pool_add(t);
        heuristic_.recomputed(t);
      }
      for (int w : replay_) {
        r.ops.push_back(rg_.load().order_at(w));
        now_ += rg_.cost(w);
        out_.recompute_ns += rg_.cost(w);
      }
      out_.replayed_ops += static_cast<int>(replay_.size());
      out_.recomputations.push_back(std::move(r));
    }
    for (TensorId t : born_at_[static_cast<size_t>(i)]) {
      where_[static_cast<size_t>(t)] = Residency::Resident;
      resident_bytes_ += rg_.bytes(t);
      pool_add(t);
    }
    touch(rg_.op_at(i));
    for (int w : replay_) touch(rg_.op_at(w));
    now_ += rg_.cost(i);
    for (TensorId t : dies_at_[static_cast<size_t>(i)]) {
      if (where(t) != Residency::Resident) throw std::logic_error("dtr: " + g_.tensor(t).name + " off the device at its last use");
      where_[static_cast<size_t>(t)] = Residency::Dead;
      resident_bytes_ -= rg_.bytes(t);
      pool_remove(t);
      heuristic_.left_device(t);
    }
  }

  void touch(const Op& op) {
    for (const auto* v : {&op.inputs, &op.outputs})
      for (TensorId t : *v) last_access_[static_cast<size_t>(t)] = now_;
  }

  const RematGraph& rg_;
  const Graph& g_;
  uint64_t budget_;
  DtrLimits limits_;
  uint64_t aim_ = 0;  // what the evictions aim at: the budget, or what the iteration cannot go under
  std::vector<std::pair<uint64_t, int>> last_reader_;  // step_peak: (stamp, last replay index reading the tensor)
  uint64_t reader_stamp_ = 0;
  std::vector<uint64_t> freed_bytes_after_;           // step_peak: bytes freed after each replay
  std::vector<Residency> where_;
  DtrHeuristic heuristic_;
  std::vector<int> evicted_after_, pin_, pool_index_;
  std::vector<int> refused_for_use_;  // the next use at which a tensor was found not recomputable (kNoUse: none)
  static constexpr int kNoUse = -2;   // next_use gives -1 for none
  std::vector<uint64_t> seen_, wanted_, kept_, made_;  // stamps of the replay planning under way
  uint64_t stamp_ = 0, keep_stamp_ = 0, made_stamp_ = 0;
  std::vector<TensorId> evicted_outs_, others_;  // evicted tensors the replays write; those op i does not read
  std::vector<TimeNs> last_access_;
  std::vector<std::vector<TensorId>> born_at_, dies_at_;
  std::vector<TensorId> pool_;      // resident rematerialisable tensors
  std::vector<std::pair<double, TensorId>> candidates_;  // cheapest_evictable's heap
  std::vector<int> replay_;         // positions replayed before the current op, in order
  std::vector<TensorId> restored_;  // evicted tensors those replays bring back
  uint64_t resident_bytes_ = 0;     // persistent + resident transient bytes
  TimeNs now_ = 0;
  DtrRun out_;
};

}  // namespace

LeastStepBytes least_step_bytes(const RematGraph& rg) {
  const Graph& g = rg.graph();
  const size_t n = static_cast<size_t>(rg.positions());
  uint64_t persistent = 0;
  std::vector<int64_t> fixed_delta(n + 1, 0);  // transients nothing can recompute, over their lives
  std::vector<std::vector<TensorId>> born(n);
  for (const Tensor& t : g.tensors()) {
    if (t.persistent) {
      persistent += t.bytes;
      continue;
    }
    const int first = rg.first_use(t.id);
    if (first < 0) continue;
    born[static_cast<size_t>(first)].push_back(t.id);
    if (rg.producer(t.id) >= 0) continue;
    fixed_delta[static_cast<size_t>(first)] += static_cast<int64_t>(t.bytes);
    fixed_delta[static_cast<size_t>(rg.last_use(t.id)) + 1] -= static_cast<int64_t>(t.bytes);
  }
  LeastStepBytes least;
  std::vector<int> counted(g.tensors().size(), -1);
  int64_t fixed = 0;
  for (size_t i = 0; i < n; ++i) {
    fixed += fixed_delta[i];
    uint64_t args = 0;  // the op's recomputable inputs and what it makes: on the device while it runs
    auto add = [&](TensorId t) {
      if (rg.persistent(t) || rg.producer(t) < 0 || counted[static_cast<size_t>(t)] == static_cast<int>(i)) return;
      counted[static_cast<size_t>(t)] = static_cast<int>(i);
      args += rg.bytes(t);
    };
    for (TensorId t : rg.op_at(static_cast<int>(i)).inputs) add(t);
    for (TensorId t : born[i]) add(t);
    const uint64_t b = persistent + static_cast<uint64_t>(fixed) + args + rg.workspace_bytes(static_cast<int>(i));
    if (least.position < 0 || b > least.bytes) least = {b, static_cast<int>(i)};
  }
  return least;
}

DtrRun run_dtr(const RematGraph& rg, uint64_t budget, DtrHeuristicKind kind, DtrLimits limits) {
  return DtrPass(rg, budget, kind, limits).run();
}

}  // namespace dlsim
