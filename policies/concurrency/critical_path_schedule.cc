#include <queue>

#include "policies/concurrency/schedules.h"

namespace dlsim {

Schedule critical_path_schedule(const Graph& g, const OpDag& dag, const OpCosts& costs, int max_streams) {
  const size_t n = g.ops().size();
  const std::vector<TimeNs> bl = bottom_levels(g, dag, costs.duration);
  Schedule s;
  s.num_streams = max_streams;
  s.stream_of.assign(n, 0);
  s.order.reserve(n);
  std::vector<int> waiting(n, 0);
  for (size_t i = 0; i < n; ++i) waiting[i] = static_cast<int>(dag.pred[i].size());
  // Highest bottom level first; the lower id on a tie (deterministic, and graph order when nothing differs).
  auto lower_priority = [&](OpId a, OpId b) {
    const TimeNs la = bl[static_cast<size_t>(a)], lb = bl[static_cast<size_t>(b)];
    return la != lb ? la < lb : a > b;
  };
  std::priority_queue<OpId, std::vector<OpId>, decltype(lower_priority)> ready(lower_priority);
  for (size_t i = 0; i < n; ++i)
    if (waiting[i] == 0) ready.push(static_cast<OpId>(i));
  std::vector<TimeNs> free_at(static_cast<size_t>(max_streams), 0), finish(n, 0);
  while (!ready.empty()) {
    const OpId v = ready.top();
    ready.pop();
    const auto vi = static_cast<size_t>(v);
    TimeNs earliest = 0;
    int pred_stream = -1;  // the stream of the predecessor that finishes last
    for (OpId p : dag.pred[vi])
      if (finish[static_cast<size_t>(p)] >= earliest) {
        earliest = finish[static_cast<size_t>(p)];
        pred_stream = s.stream_of[static_cast<size_t>(p)];
      }
    int best = pred_stream >= 0 ? pred_stream : 0;
    TimeNs best_start = std::max(free_at[static_cast<size_t>(best)], earliest);
    for (int k = 0; k < max_streams; ++k) {
      const TimeNs start = std::max(free_at[static_cast<size_t>(k)], earliest);
      if (start < best_start) best = k, best_start = start;
    }
    s.stream_of[vi] = best;
    finish[vi] = best_start + costs.duration[vi];
    free_at[static_cast<size_t>(best)] = finish[vi];
    s.order.push_back(v);
    for (OpId w : dag.succ[vi])
      if (--waiting[static_cast<size_t>(w)] == 0) ready.push(w);
  }
  compact_streams(s);
  return s;
}

}  // namespace dlsim
