#include "sim/stage_simulation.h"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "sim/device_model.h"
#include "sim/event_queue.h"

namespace dlsim {

namespace {

class NoListener : public DeviceListener {
 public:
  void command_done(int) override {}
};

}  // namespace

TimeNs simulate_stage(const Graph& g, const GpuSpec& gpu, const KernelCostModel& kernels, const TransferModel& link,
                      const std::vector<std::vector<OpId>>& groups, TimeNs launch_overhead_ns) {
  if (groups.empty() || groups.size() > kMaxStageGroups)
    throw std::invalid_argument("simulate_stage: " + std::to_string(groups.size()) + " groups (1 to " +
                                std::to_string(kMaxStageGroups) + ")");
  // The host's issue order: round-robin by depth across the groups, as a runtime that walks the stage does.
  std::vector<std::pair<int, OpId>> issue;
  for (size_t depth = 0;; ++depth) {
    bool any = false;
    for (size_t j = 0; j < groups.size(); ++j)
      if (depth < groups[j].size()) {
        issue.push_back({static_cast<int>(j), groups[j][depth]});
        any = true;
      }
    if (!any) break;
  }
  EventQueue q(64);
  NoListener listener;
  DeviceModel dev(g, gpu, kernels, link, static_cast<int>(groups.size()), 0, q, listener, nullptr);
  TimeNs now = 0, next_issue = 0;
  size_t i = 0;
  while (i < issue.size() || !dev.idle()) {
    const TimeNs device_next = q.empty() ? std::numeric_limits<TimeNs>::max() : q.top().time;
    if (i < issue.size() && next_issue <= device_next) {  // the host goes first on a tie, as the executor
      now = next_issue;
      StreamCmd c;
      c.kind = CmdKind::Launch;
      c.op = issue[i].second;
      dev.enqueue(issue[i].first, c);
      ++i;
      next_issue = now + launch_overhead_ns;
    } else {
      if (q.empty()) throw std::logic_error("simulate_stage: the device is busy with nothing scheduled");
      const Event e = q.pop();
      now = e.time;
      dev.handle(e, now);
    }
    dev.settle(now);
  }
  return std::max(now, launch_overhead_ns * static_cast<TimeNs>(issue.size()));
}

}  // namespace dlsim
