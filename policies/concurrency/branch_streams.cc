#include <algorithm>

#include "policies/concurrency/schedules.h"

namespace dlsim {

Schedule branch_streams_schedule(const Graph& g, const OpDag& dag, int max_streams) {
  const size_t n = g.ops().size();
  Schedule s;
  s.num_streams = max_streams;
  s.stream_of.assign(n, 0);
  std::vector<OpId> tail(static_cast<size_t>(max_streams), -1);    // last op on each stream
  std::vector<int> last_use(static_cast<size_t>(max_streams), -1);  // position of that op
  std::vector<char> continued(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const OpId v = static_cast<OpId>(i);
    int chosen = -1;
    for (OpId p : dag.pred[i]) {
      const auto pi = static_cast<size_t>(p);
      if (!continued[pi] && tail[static_cast<size_t>(s.stream_of[pi])] == p) {
        chosen = s.stream_of[pi];
        continued[pi] = 1;
        break;
      }
    }
    if (chosen < 0)  // a new branch (or a source): the least recently used stream
      chosen = static_cast<int>(std::min_element(last_use.begin(), last_use.end()) - last_use.begin());
    s.stream_of[i] = chosen;
    tail[static_cast<size_t>(chosen)] = v;
    last_use[static_cast<size_t>(chosen)] = static_cast<int>(i);
    s.order.push_back(v);
  }
  compact_streams(s);
  return s;
}

}  // namespace dlsim
