#pragma once
// The search behind fastest-under-limit (fastest_under_limit.h, steps 1-4 and 6): the gaps between a tensor's
// uses that a plan may leave it absent in, a greedy cover of the load over the limit, the schedule of each
// chosen absence (lazy frees, just-in-time copy-ins), and improvement on the timeline estimate. Only
// fastest_under_limit.cc uses it; it has its own header so that each file holds one concept.
#include <algorithm>
#include <limits>
#include <set>
#include <vector>

#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/core/program_load.h"
#include "policies/swap/core/swap_policy.h"
#include "policies/swap/core/swap_timeline.h"

namespace dlsim {

// A gap between two consecutive uses of a tensor: absent at most over positions a+1 .. b-1.
struct AbsenceGap {
  TensorId tensor;
  uint64_t bytes;
  int a, b;
  int last_write;  // last position at or before a that writes the tensor (-1: none)
  TimeNs slack;    // the absence's length minus its two transfers
  TimeNs transfer;
};

enum class CoverRule { LongestSlack, LeastTransfer };

// The state of one search: chosen gaps with their free point and last absent position.
struct AbsenceChoice {
  size_t gap;
  int f, g;
};

class AbsenceSearch {
 public:
  AbsenceSearch(const SwapContext& ctx, const ProgramLoad& load, const CopyTimeLine& copy, uint64_t limit, uint64_t min_bytes)
      : ctx_(ctx), load_(load), copy_(copy), limit_(static_cast<int64_t>(limit)), timeline_(ctx.profile, copy) {
    const Graph& g = ctx.graph;
    const auto& p = ctx.profile;
    for (const Tensor& t : g.tensors()) {
      if (t.bytes < min_bytes || t.kind == TensorKind::Workspace) continue;
      const auto& u = load.uses(t.id);
      const auto& w = load.writes(t.id);
      for (size_t k = 0; k + 1 < u.size(); ++k) {
        if (u[k + 1] - u[k] < 2) continue;
        const int a = u[k], b = u[k + 1];
        int lw = -1;
        for (int x : w)
          if (x <= a) lw = x;
        const TimeNs transfer = copy.out(t.bytes) + copy.in(t.bytes);
        const TimeNs window = p.op_start[static_cast<size_t>(b)] - p.op_end[static_cast<size_t>(a)];
        gaps_.push_back({t.id, t.bytes, a, b, lw, window - transfer, transfer});
      }
    }
  }

  bool met(const std::vector<AbsenceChoice>& c) const {
    const auto l = load_with(c);
    return *std::max_element(l.begin(), l.end()) <= limit_;
  }

  // Steps 2: cover the excess, avoiding the gaps in `banned`.
  std::vector<AbsenceChoice> cover(CoverRule rule, std::vector<AbsenceChoice> chosen, const std::set<size_t>& banned) const {
    std::vector<int64_t> cur = load_with(chosen);
    std::set<size_t> used;
    for (const AbsenceChoice& c : chosen) used.insert(c.gap);
    while (true) {
      const auto it = std::max_element(cur.begin(), cur.end());
      if (*it <= limit_) break;
      const int i = static_cast<int>(it - cur.begin());
      const int64_t excess = *it - limit_;
      size_t best = gaps_.size();
      for (size_t k = 0; k < gaps_.size(); ++k) {
        const AbsenceGap& x = gaps_[k];
        if (!(x.a < i && i < x.b) || used.count(k) || banned.count(k)) continue;
        if (best == gaps_.size() || better(rule, x, gaps_[best], excess)) best = k;
      }
      if (best == gaps_.size()) break;  // nothing left to take off at op i: the limit is out of reach
      used.insert(best);
      const AbsenceGap& x = gaps_[best];
      chosen.push_back({best, x.a, x.b - 1});
      for (int j = x.a + 1; j < x.b; ++j) cur[static_cast<size_t>(j)] -= static_cast<int64_t>(x.bytes);
    }
    return chosen;
  }

  // Step 3: when each chosen tensor leaves and comes back. Copy-outs run in the order of their last uses,
  // each from its writer's end; a tensor is freed only where the load needs it gone (lazily), those whose copy
  // is done first going first, so that copies have the most time. Copy-ins are placed backwards from the last
  // use, each to finish when its op starts or when the next one must start (one H2D stream), and moved later
  // only where the load leaves no room for the tensor.
  void relax(std::vector<AbsenceChoice>& chosen) const {
    const auto& p = ctx_.profile;
    const int n = load_.positions();
    normalize(chosen);
    const size_t k = chosen.size();
    std::vector<TimeNs> out_end(k);
    TimeNs d2h = 0;
    for (size_t i = 0; i < k; ++i) {
      const AbsenceGap& x = gaps_[chosen[i].gap];
      d2h = std::max(d2h, x.last_write >= 0 ? p.op_end[static_cast<size_t>(x.last_write)] : TimeNs{0}) + copy_.out(x.bytes);
      out_end[i] = d2h;
    }
    // Out: sweep the positions; where the load is over the limit, free the tensors whose copies end first.
    std::vector<int64_t> cur(load_.load().begin(), load_.load().end());
    std::vector<int> by_end(k);
    for (size_t i = 0; i < k; ++i) by_end[i] = static_cast<int>(i);
    std::stable_sort(by_end.begin(), by_end.end(), [&](int x, int y) { return out_end[static_cast<size_t>(x)] < out_end[static_cast<size_t>(y)]; });
    std::vector<uint8_t> gone(k, 0);
    std::vector<int64_t> diff(static_cast<size_t>(n) + 1, 0);
    int64_t run = 0;
    for (int i = 0; i < n; ++i) {
      run += diff[static_cast<size_t>(i)];
      int64_t now = cur[static_cast<size_t>(i)] + run;
      for (int c : by_end) {
        if (now <= limit_) break;
        const AbsenceGap& x = gaps_[chosen[static_cast<size_t>(c)].gap];
        if (gone[static_cast<size_t>(c)] || !(x.a < i && i < x.b)) continue;
        gone[static_cast<size_t>(c)] = 1;
        chosen[static_cast<size_t>(c)].f = i - 1;
        now -= static_cast<int64_t>(x.bytes);
        run -= static_cast<int64_t>(x.bytes);
        diff[static_cast<size_t>(x.b)] += static_cast<int64_t>(x.bytes);  // absent up to b-1 for now
      }
    }
    for (size_t c = 0; c < k; ++c)  // never needed gone: leave and come back at once (no absence)
      if (!gone[c]) chosen[c].f = chosen[c].g = gaps_[chosen[c].gap].a;
    // In: backwards from the last use, as late as the stream allows, as early as the load allows.
    cur = load_with(chosen);
    std::vector<size_t> by_use(k);
    for (size_t i = 0; i < k; ++i) by_use[i] = i;
    std::stable_sort(by_use.begin(), by_use.end(), [&](size_t x, size_t y) { return gaps_[chosen[x].gap].b > gaps_[chosen[y].gap].b; });
    TimeNs next_start = std::numeric_limits<TimeNs>::max();
    for (size_t c : by_use) {
      AbsenceChoice& ch = chosen[c];
      const AbsenceGap& x = gaps_[ch.gap];
      if (ch.f >= ch.g) continue;
      const TimeNs finish = std::min(p.op_start[static_cast<size_t>(x.b)], next_start);
      const TimeNs start = finish - copy_.in(x.bytes);
      int g = ch.g;
      while (g > ch.f + 1 && p.op_end[static_cast<size_t>(g)] > start &&
             cur[static_cast<size_t>(g)] + static_cast<int64_t>(x.bytes) <= limit_) {
        cur[static_cast<size_t>(g)] += static_cast<int64_t>(x.bytes);  // present from g on
        --g;
      }
      ch.g = g;
      next_start = std::max(p.op_end[static_cast<size_t>(g)], start);
    }
  }

  // Step 4: drop the worst staller and cover again without it, while the estimate improves.
  std::vector<AbsenceChoice> improve(CoverRule rule, std::vector<AbsenceChoice> chosen, int rounds) const {
    normalize(chosen);
    TimeNs best = estimate(to_plan(chosen)).iteration_ns;
    std::set<size_t> banned;
    for (int r = 0; r < rounds; ++r) {
      const auto est = estimate(to_plan(chosen));
      // the estimate's figures are per plan action, and to_plan leaves out the choices with no absence
      std::vector<size_t> choice_of;
      for (size_t k = 0; k < chosen.size(); ++k)
        if (chosen[k].f < chosen[k].g) choice_of.push_back(k);
      size_t worst = chosen.size();
      TimeNs worst_stall = 0;
      for (size_t a = 0; a < choice_of.size(); ++a)
        if (est.stall_of[a] > worst_stall) {
          worst_stall = est.stall_of[a];
          worst = choice_of[a];
        }
      if (worst == chosen.size()) break;  // nothing stalls
      banned.insert(chosen[worst].gap);
      std::vector<AbsenceChoice> trial = chosen;
      trial.erase(trial.begin() + static_cast<std::ptrdiff_t>(worst));
      for (AbsenceChoice& c : trial) {  // back to full absences, so that the cover sees the room they can give
        c.f = gaps_[c.gap].a;
        c.g = gaps_[c.gap].b - 1;
      }
      trial = cover(rule, trial, banned);
      if (!met(trial)) continue;
      relax(trial);
      normalize(trial);
      const TimeNs t = estimate(to_plan(trial)).iteration_ns;
      if (t < best) {
        best = t;
        chosen = trial;
      }
    }
    return chosen;
  }

  // Choices in the order of their copy-outs (the order of the plan's actions and of the estimate's figures).
  void normalize(std::vector<AbsenceChoice>& c) const {
    std::stable_sort(c.begin(), c.end(), [&](const AbsenceChoice& x, const AbsenceChoice& y) {
      return gaps_[x.gap].a != gaps_[y.gap].a ? gaps_[x.gap].a < gaps_[y.gap].a : x.gap < y.gap;
    });
  }

  SwapPlan to_plan(std::vector<AbsenceChoice> c) const {
    normalize(c);
    SwapPlan plan;
    std::vector<int> held_since(ctx_.graph.tensors().size(), -1);  // position after which a host copy is current
    for (const AbsenceChoice& x : c) {
      const AbsenceGap& gp = gaps_[x.gap];
      if (x.f >= x.g) continue;  // no absence: nothing to do
      SwapAction a;
      a.tensor = gp.tensor;
      a.out_after = gp.a;
      a.free_after = x.f;
      a.in_issue_after = x.g;
      a.in_needed_by = gp.b;
      // a tensor brought back earlier and not written since is still on the host: drop it without a copy
      const int since = held_since[static_cast<size_t>(gp.tensor)];
      a.copy_out = !(since >= 0 && gp.last_write < since);
      held_since[static_cast<size_t>(gp.tensor)] = gp.b;
      plan.actions.push_back(a);
    }
    return plan;
  }

  // The timeline estimate of a plan (swap_timeline.h): its iteration time and, per action, the stall it caused.
  TimelineEstimate estimate(const SwapPlan& plan) const {
    std::vector<int> lw;
    for (const SwapAction& a : plan.actions) {
      int w = -1;
      for (int x : load_.writes(a.tensor))
        if (x <= a.out_after) w = x;
      lw.push_back(w);
    }
    std::vector<int> fp;
    for (const SwapAction& a : plan.actions) fp.push_back(a.free_after);
    return timeline_.estimate(ctx_.graph, plan, fp, lw);
  }

  // The gaps a plan's actions use (actions on gaps this search does not know are left out).
  std::vector<AbsenceChoice> from_plan(const SwapPlan& plan) const {
    std::vector<AbsenceChoice> out;
    for (const SwapAction& a : plan.actions)
      for (size_t k = 0; k < gaps_.size(); ++k)
        if (gaps_[k].tensor == a.tensor && gaps_[k].b == a.in_needed_by && gaps_[k].a <= a.out_after) {
          out.push_back({k, gaps_[k].a, gaps_[k].b - 1});
          break;
        }
    normalize(out);
    return out;
  }

  const std::vector<AbsenceGap>& gaps() const { return gaps_; }

 private:
  static bool better(CoverRule rule, const AbsenceGap& x, const AbsenceGap& y, int64_t excess) {
    if (rule == CoverRule::LongestSlack) return x.slack != y.slack ? x.slack > y.slack : x.bytes > y.bytes;
    const bool hx = x.slack >= 0, hy = y.slack >= 0;
    if (hx != hy) return hx;
    // transfer time per byte of the excess it covers, least first
    const double cx = static_cast<double>(x.transfer) / static_cast<double>(std::min<int64_t>(excess, static_cast<int64_t>(x.bytes)));
    const double cy = static_cast<double>(y.transfer) / static_cast<double>(std::min<int64_t>(excess, static_cast<int64_t>(y.bytes)));
    return cx != cy ? cx < cy : x.slack > y.slack;
  }

  std::vector<int64_t> load_with(const std::vector<AbsenceChoice>& chosen) const {
    std::vector<int64_t> cur(load_.load().begin(), load_.load().end());
    std::vector<int64_t> diff(cur.size() + 1, 0);
    for (const AbsenceChoice& c : chosen) {
      if (c.f + 1 > c.g) continue;
      const auto b = static_cast<int64_t>(gaps_[c.gap].bytes);
      diff[static_cast<size_t>(c.f + 1)] -= b;
      diff[static_cast<size_t>(c.g + 1)] += b;
    }
    int64_t run = 0;
    for (size_t i = 0; i < cur.size(); ++i) {
      run += diff[i];
      cur[i] += run;
    }
    return cur;
  }

  const SwapContext& ctx_;
  const ProgramLoad& load_;
  CopyTimeLine copy_;
  int64_t limit_;
  SwapTimeline timeline_;
  std::vector<AbsenceGap> gaps_;
};

}  // namespace dlsim
