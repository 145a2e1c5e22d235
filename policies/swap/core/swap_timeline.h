#pragma once
// A fast estimate of what a swap plan costs in time, for a search that tries thousands of plans before the
// simulator judges the few best. The profiled ops keep their durations and order; a stall pushes every later op
// back by the same amount (a relaxation that is exact on one stream and approximate on several). Copies follow
// the lowering's rules (program/lower.h): each direction is one FIFO stream in issue order; a copy-out starts when
// it is issued (after op out_after) and its tensor's last writer is done; the op after free_after waits for
// it; a copy-in starts when it is issued (after op in_issue_after has run, as it waits for that point of the
// compute stream) and the copy-out is done; the op at in_needed_by waits for it.
#include <cstdint>
#include <vector>

#include "policies/swap/core/copy_time_line.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

struct TimelineEstimate {
  TimeNs iteration_ns = 0;
  TimeNs stall_ns = 0;
  std::vector<TimeNs> stall_of;  // per action: the stall it caused (its copy was the one waited for)
};

class SwapTimeline {
 public:
  // `last_write_before[a]` of each action: the position of the last op writing its tensor at or before
  // out_after (-1: none in the iteration).
  SwapTimeline(const IterationProfile& profile, const CopyTimeLine& copy) : p_(profile), copy_(copy) {}
  TimelineEstimate estimate(const Graph& g, const SwapPlan& plan, const std::vector<int>& free_points,
                            const std::vector<int>& last_write_before) const;

 private:
  const IterationProfile& p_;
  CopyTimeLine copy_;
};

}  // namespace dlsim
