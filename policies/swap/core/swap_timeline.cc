#include "policies/swap/core/swap_timeline.h"

#include <algorithm>

namespace dlsim {

TimelineEstimate SwapTimeline::estimate(const Graph& g, const SwapPlan& plan, const std::vector<int>& free_points,
                                        const std::vector<int>& last_write_before) const {
  const int n = static_cast<int>(p_.op_start.size());
  const size_t na = plan.actions.size();
  // Per position: actions whose copy-out is issued after it, freed after it, copied in after it, needed there.
  std::vector<std::vector<size_t>> outs(static_cast<size_t>(n)), frees(static_cast<size_t>(n)),
      ins(static_cast<size_t>(n)), needs(static_cast<size_t>(n));
  for (size_t a = 0; a < na; ++a) {
    const SwapAction& x = plan.actions[a];
    outs[static_cast<size_t>(x.out_after)].push_back(a);
    frees[static_cast<size_t>(free_points[a])].push_back(a);
    ins[static_cast<size_t>(x.in_issue_after)].push_back(a);
    needs[static_cast<size_t>(x.in_needed_by)].push_back(a);
  }
  for (auto& v : ins)  // as the lowering issues them: the earliest needed first
    std::stable_sort(v.begin(), v.end(), [&](size_t a, size_t b) { return plan.actions[a].in_needed_by < plan.actions[b].in_needed_by; });
  TimelineEstimate r;
  r.stall_of.assign(na, 0);
  std::vector<TimeNs> out_end(na, 0), in_end(na, 0), end(static_cast<size_t>(n), 0);
  TimeNs shift = 0, d2h_free = 0, h2d_free = 0;
  std::vector<TimeNs> pending_wait;  // copy-out ends the next op must wait for, with their actions
  std::vector<size_t> pending_who;
  for (int p = 0; p < n; ++p) {
    const auto pi = static_cast<size_t>(p);
    TimeNs start = p_.op_start[pi] + shift, need = start;
    size_t culprit = na;
    for (size_t k = 0; k < pending_wait.size(); ++k)
      if (pending_wait[k] > need) {
        need = pending_wait[k];
        culprit = pending_who[k];
      }
    for (size_t a : needs[pi])
      if (in_end[a] > need) {
        need = in_end[a];
        culprit = a;
      }
    if (need > start) {
      shift += need - start;
      r.stall_of[culprit] += need - start;
      start = need;
    }
    pending_wait.clear();
    pending_who.clear();
    end[pi] = p_.op_end[pi] + shift;
    for (size_t a : outs[pi]) {
      const SwapAction& x = plan.actions[a];
      if (!x.copy_out) continue;
      const int w = last_write_before[a];
      // the host issues far ahead: the copy waits for the tensor's writer (or the iteration's start) only
      const TimeNs ready = w >= 0 ? end[static_cast<size_t>(w)] : TimeNs{0};
      const TimeNs s = std::max(ready, d2h_free);
      out_end[a] = s + copy_.out(g.tensor(x.tensor).bytes);
      d2h_free = out_end[a];
    }
    for (size_t a : frees[pi])
      if (plan.actions[a].copy_out) {
        pending_wait.push_back(out_end[a]);
        pending_who.push_back(a);
      }
    for (size_t a : ins[pi]) {
      const TimeNs s = std::max({end[pi], h2d_free, out_end[a]});
      in_end[a] = s + copy_.in(g.tensor(plan.actions[a].tensor).bytes);
      h2d_free = in_end[a];
    }
  }
  r.stall_ns = shift;
  r.iteration_ns = p_.iteration_ns + shift;
  return r;
}

}  // namespace dlsim
