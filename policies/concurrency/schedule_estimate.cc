#include "policies/concurrency/schedule_estimate.h"

#include <algorithm>
#include <limits>
#include <numeric>

namespace dlsim {

void fair_rates(const std::vector<double>& demands, std::vector<double>& rates) {
  const size_t k = demands.size();
  rates.assign(k, 1.0);
  double total = 0;
  for (double d : demands) total += d;
  if (total <= 1.0) return;
  std::vector<size_t> idx(k);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return demands[a] < demands[b]; });
  double left = 1.0;
  for (size_t j = 0; j < k; ++j) {
    const size_t i = idx[j];
    const double fair = left / static_cast<double>(k - j);
    const double granted = std::min(demands[i], fair);
    rates[i] = granted / demands[i];
    left -= granted;
  }
}

TimeNs estimate_ops(const EstimateInput& in, const std::vector<OpId>& order, const std::vector<int>& stream_of,
                    int num_streams) {
  const size_t m = order.size();
  if (m == 0) return 0;
  // Local state by position in `order`.
  std::vector<int> pos_of_op;  // OpId -> position, -1 outside
  pos_of_op.assign(in.dag.size(), -1);
  for (size_t i = 0; i < m; ++i) pos_of_op[static_cast<size_t>(order[i])] = static_cast<int>(i);
  std::vector<int> waiting(m, 0);  // predecessors inside the set not yet finished
  for (size_t i = 0; i < m; ++i)
    for (OpId p : in.dag.pred[static_cast<size_t>(order[i])])
      if (pos_of_op[static_cast<size_t>(p)] >= 0) ++waiting[i];
  std::vector<std::vector<size_t>> fifo(static_cast<size_t>(num_streams));
  for (size_t i = 0; i < m; ++i) fifo[static_cast<size_t>(stream_of[static_cast<size_t>(order[i])])].push_back(i);
  std::vector<size_t> head(fifo.size(), 0);
  std::vector<double> remaining(m, 0);
  std::vector<char> running_on(fifo.size(), 0);  // stream has a kernel running
  std::vector<size_t> running;                   // positions
  std::vector<double> demands, rates;
  const double overhead = static_cast<double>(in.launch_overhead_ns);
  auto issued_at = [&](size_t i) { return overhead * static_cast<double>(i + 1); };
  double now = 0;
  size_t done = 0;
  while (done < m) {
    // Start every stream head that is issued and ready; zero-time ops finish at once and may free others.
    bool progress = true;
    while (progress) {
      progress = false;
      for (size_t s = 0; s < fifo.size(); ++s) {
        if (running_on[s] || head[s] >= fifo[s].size()) continue;
        const size_t i = fifo[s][head[s]];
        if (waiting[i] > 0 || issued_at(i) > now + 1e-9) continue;
        const OpId op = order[i];
        const double d = static_cast<double>(in.duration[static_cast<size_t>(op)]);
        if (d <= 0) {
          ++head[s];
          ++done;
          for (OpId v : in.dag.succ[static_cast<size_t>(op)])
            if (pos_of_op[static_cast<size_t>(v)] >= 0) --waiting[static_cast<size_t>(pos_of_op[static_cast<size_t>(v)])];
        } else {
          remaining[i] = d;
          running_on[s] = 1;
          running.push_back(i);
        }
        progress = true;
      }
    }
    if (done == m) break;
    // Next event: a completion at the current rates, or the next issue that could unblock a stream.
    demands.clear();
    for (size_t i : running) demands.push_back(in.demand[static_cast<size_t>(order[i])]);
    fair_rates(demands, rates);
    double next = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < running.size(); ++j) next = std::min(next, now + remaining[running[j]] / rates[j]);
    for (size_t s = 0; s < fifo.size(); ++s)
      if (!running_on[s] && head[s] < fifo[s].size()) {
        const double t = issued_at(fifo[s][head[s]]);
        if (t > now + 1e-9) next = std::min(next, t);
      }
    if (next == std::numeric_limits<double>::infinity()) break;  // not reachable for a topological order
    const double dt = next - now;
    const double before = now;
    now = next;
    std::vector<size_t> still;
    for (size_t j = 0; j < running.size(); ++j) {
      const size_t i = running[j];
      // Whether it ends at `next` is decided on the completion time itself, not on what is left after the
      // subtraction: at long times (1e15 ns) a double's step exceeds the residue, `now` would stop moving and the
      // loop would never end (the simulation fuzzer's seed 201568).
      const bool ends = before + remaining[i] / rates[j] <= next;
      remaining[i] -= dt * rates[j];
      if (!ends && remaining[i] > 1e-6) {
        still.push_back(i);
        continue;
      }
      const OpId op = order[i];
      const auto s = static_cast<size_t>(stream_of[static_cast<size_t>(op)]);
      running_on[s] = 0;
      ++head[s];
      ++done;
      for (OpId v : in.dag.succ[static_cast<size_t>(op)])
        if (pos_of_op[static_cast<size_t>(v)] >= 0) --waiting[static_cast<size_t>(pos_of_op[static_cast<size_t>(v)])];
    }
    running.swap(still);
  }
  return static_cast<TimeNs>(now + 0.5);
}

TimeNs estimate_schedule(const Graph& g, const OpDag& dag, const KernelCostModel& cost, const Schedule& s,
                         TimeNs launch_overhead_ns) {
  OpCosts c = op_costs(g, cost);
  for (size_t i = 0; i < s.variant_of.size(); ++i)
    if (s.variant_of[i] != 0) {
      const KernelCost k = cost.variants(g, g.ops()[i]).at(s.variant_of[i]).cost;
      c.duration[i] = k.duration_ns;
      c.demand[i] = k.sm_fraction;
    }
  EstimateInput in{dag, std::move(c.duration), std::move(c.demand), launch_overhead_ns};
  return estimate_ops(in, s.order, s.stream_of, s.num_streams);
}

}  // namespace dlsim
