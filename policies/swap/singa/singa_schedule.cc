#include "policies/swap/singa/singa_schedule.h"

#include <algorithm>

namespace dlsim {

std::vector<ScheduledSwap> singa_schedule(const SingaTrace& trace, const std::vector<SwapCandidate>& chosen,
                                          const CopyTimeLine& copy, SingaMode mode, uint64_t limit) {
  const int n = trace.size();
  const bool stick = mode == SingaMode::StickToLimit;
  auto time_at = [&](int idx) { return trace.at(std::min(idx, n - 1)).time; };
  std::vector<int64_t> load(static_cast<size_t>(n));  // the load as the schedule so far leaves it
  for (int i = 0; i < n; ++i) load[static_cast<size_t>(i)] = static_cast<int64_t>(trace.at(i).load);
  const auto lim = static_cast<int64_t>(limit);

  std::vector<ScheduledSwap> s;
  for (const SwapCandidate& c : chosen) s.push_back({c, 0, 0, 0, 0});
  std::sort(s.begin(), s.end(), [](const ScheduledSwap& a, const ScheduledSwap& b) { return a.c.r < b.c.r; });
  int prev_end = 0;
  for (ScheduledSwap& x : s) {
    const auto b = static_cast<int64_t>(x.c.bytes);
    x.out_start = std::max(x.c.ready, prev_end);
    const TimeNs t_end = time_at(x.out_start) + copy.out(x.c.bytes);
    x.out_end = std::min(trace.first_at_or_after(t_end), n);
    if (stick)
      for (int k = x.out_start; k < x.out_end; ++k)
        if (load[static_cast<size_t>(k)] > lim) {  // still on the device where the load is over the limit
          x.stall_ns += std::max<TimeNs>(0, t_end - time_at(k));
          x.out_end = k;
          break;
        }
    for (int j = x.out_end; j < x.c.d; ++j) load[static_cast<size_t>(j)] -= b;
    prev_end = x.out_end;
  }

  std::sort(s.begin(), s.end(), [](const ScheduledSwap& a, const ScheduledSwap& b) { return a.c.d > b.c.d; });
  int next_start = n;
  for (ScheduledSwap& x : s) {
    const auto b = static_cast<int64_t>(x.c.bytes);
    const int need = std::min(x.c.d, next_start);
    const TimeNs t_need = time_at(need);
    x.in_start = std::max(std::max(trace.last_at_or_before(t_need - copy.in(x.c.bytes)), 0), x.out_end);
    if (stick) {
      int over = -1;  // the last index where bringing the block back would cross the limit
      for (int j = x.in_start; j < x.c.d; ++j)
        if (load[static_cast<size_t>(j)] + b > lim) over = j;
      if (over >= 0) {
        x.in_start = over + 1;
        x.stall_ns += std::max<TimeNs>(0, time_at(x.in_start) + copy.in(x.c.bytes) - t_need);
      }
    } else {
      x.exposed_ns = std::max<TimeNs>(0, time_at(x.in_start) + copy.in(x.c.bytes) - t_need);
    }
    for (int j = x.in_start; j < x.c.d; ++j) load[static_cast<size_t>(j)] += b;
    next_start = std::min(next_start, x.in_start);
  }
  std::sort(s.begin(), s.end(), [](const ScheduledSwap& a, const ScheduledSwap& b) { return a.c.r < b.c.r; });
  return s;
}

}  // namespace dlsim
