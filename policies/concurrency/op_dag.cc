#include "policies/concurrency/op_dag.h"

#include <algorithm>
#include <string>

namespace dlsim {

OpDag op_dag(const Graph& g) {
  OpDag d;
  const size_t n = g.ops().size();
  d.succ.assign(n, {});
  d.pred.assign(n, {});
  const Graph::Dag dag = g.dag();
  for (auto [e, end] = boost::edges(dag); e != end; ++e) {
    const auto u = static_cast<OpId>(boost::source(*e, dag)), v = static_cast<OpId>(boost::target(*e, dag));
    d.succ[static_cast<size_t>(u)].push_back(v);
    d.pred[static_cast<size_t>(v)].push_back(u);
  }
  for (auto* lists : {&d.succ, &d.pred})
    for (auto& l : *lists) {
      std::sort(l.begin(), l.end());
      l.erase(std::unique(l.begin(), l.end()), l.end());
    }
  return d;
}

OpCosts op_costs(const Graph& g, const KernelCostModel& cost) {
  OpCosts c;
  c.duration.reserve(g.ops().size());
  c.demand.reserve(g.ops().size());
  for (const Op& op : g.ops()) {
    const KernelCost k = cost.cost(g, op);
    c.duration.push_back(k.duration_ns);
    c.demand.push_back(k.sm_fraction);
  }
  return c;
}

std::vector<TimeNs> fastest_durations(const Graph& g, const KernelCostModel& cost) {
  std::vector<TimeNs> d;
  d.reserve(g.ops().size());
  for (const Op& op : g.ops()) {
    TimeNs best = cost.cost(g, op).duration_ns;
    for (const KernelVariant& v : cost.variants(g, op)) best = std::min(best, v.cost.duration_ns);
    d.push_back(best);
  }
  return d;
}

// Ops are stored in a valid issue order (Graph), so one reverse pass over the ids sees successors first; the
// DAG's edges all go from a lower id to a higher one.
std::vector<TimeNs> bottom_levels(const Graph& g, const OpDag& dag, const std::vector<TimeNs>& duration) {
  const size_t n = g.ops().size();
  std::vector<TimeNs> b(n, 0);
  for (size_t i = n; i-- > 0;) {
    TimeNs best = 0;
    for (OpId s : dag.succ[i]) best = std::max(best, b[static_cast<size_t>(s)]);
    b[i] = best + duration[i];
  }
  return b;
}

TimeNs critical_path_ns(const Graph& g, const OpDag& dag, const std::vector<TimeNs>& duration) {
  TimeNs cp = 0;
  for (TimeNs b : bottom_levels(g, dag, duration)) cp = std::max(cp, b);
  return cp;
}

std::vector<int> stage_widths(const Graph& g, const OpDag& dag, const std::vector<Phase>& phases) {
  const size_t n = g.ops().size();
  auto in = [&](const Op& op) { return std::find(phases.begin(), phases.end(), op.phase) != phases.end(); };
  std::vector<int> stage(n, -1);
  std::vector<int> widths;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g.ops()[i];
    if (!in(op)) continue;
    const bool kernel = op.flops > 0 || op.bytes_read + op.bytes_written > 0;
    int base = -1;
    for (OpId p : dag.pred[i]) base = std::max(base, stage[static_cast<size_t>(p)]);
    const int s = std::max(0, base + (kernel ? 1 : 0));  // a view sits at its producer's stage
    stage[i] = s;
    if (!kernel) continue;
    if (widths.size() <= static_cast<size_t>(s)) widths.resize(static_cast<size_t>(s) + 1, 0);
    ++widths[static_cast<size_t>(s)];
  }
  // A view at the very start may have left stage 0 empty; drop empty stages (only possible at the front).
  widths.erase(std::remove(widths.begin(), widths.end(), 0), widths.end());
  return widths;
}

bool is_topological(const Graph& g, const OpDag& dag, const std::vector<OpId>& order, std::string* why) {
  const size_t n = g.ops().size();
  std::vector<int> pos(n, -1);
  auto fail = [&](const std::string& w) {
    if (why) *why = w;
    return false;
  };
  if (order.size() != n) return fail("order lists " + std::to_string(order.size()) + " ops of " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    const OpId o = order[i];
    if (o < 0 || static_cast<size_t>(o) >= n || pos[static_cast<size_t>(o)] >= 0) return fail("order[" + std::to_string(i) + "] is not a new op");
    pos[static_cast<size_t>(o)] = static_cast<int>(i);
  }
  for (size_t u = 0; u < n; ++u)
    for (OpId v : dag.succ[u])
      if (pos[u] > pos[static_cast<size_t>(v)])
        return fail("op '" + g.op(v).name + "' comes before its predecessor '" + g.ops()[u].name + "'");
  return true;
}

}  // namespace dlsim
