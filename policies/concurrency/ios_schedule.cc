// IOS over the training graph. IOS (Ding et al., MLSys'21) cuts an inference graph into blocks and, per block,
// finds by dynamic programming the sequence of stages (each a set of independent groups of ops, a group a chain
// run in order on its own stream) that minimises the sum of stage latencies, which it measures on the GPU.
// What this implementation does differently, and why:
// - Training graph: the forward ops and the backward ops form two phases, each cut into parts on its own (edges
//   from forward to backward are the saved activations: the phase boundary satisfies them). Optimizer ops are
//   sinks; each rides in the unit of the op it waits for last (its gradient's producer), so an update runs in the
//   group that produced its gradient rather than widening the DP.
// - Parts: the units of a phase sorted by ASAP level (so that a part holds the branches side by side, not one
//   branch after another as the graph stores them), cut where the graph narrows to one unit (every edge from
//   earlier units ends at it) or after max_part_ops units (IOS: max_part_size).
// - Candidates of a stage, from the s ready units with the longest remaining paths (s = min(s, max_streams)):
//   every single group (such a unit and the chain of units that only it unblocks, 1 to r long: so a serial
//   order, by remaining path, is a candidate) and every set of 2 to s groups of maximal chains. IOS enumerates
//   groups as an operator with its successors, r and s bounding them the same way.
// - Stage latency: simulated, not measured: the groups run on their own streams, ops issued round-robin across
//   groups by the host at launch_overhead_ns each. IosOptions::stage_time prices a stage (the CLI passes the
//   device model of sim/device_model.h, sim/stage_simulation.h: block dispatch, tail-only overlap of full-GPU
//   kernels, shared HBM bandwidth); without it, a fluid estimate with kernels sharing the SMs max-min fairly by
//   sm_fraction (schedule_estimate.h's rule). A stage costs at least its issue time.
//   Memoised per part. The stages run without IOS's device-wide barrier: lowering puts events on the edges.
#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "policies/concurrency/schedule_estimate.h"
#include "policies/concurrency/schedules.h"

namespace dlsim {

namespace {

struct Unit {
  std::vector<OpId> ops;  // the head op, then the optimizer ops riding in it, in id order
  int group = 0;          // 0 forward, 1 backward (with the optimizer)
};

class IosPlanner {
 public:
  IosPlanner(const Graph& g, const OpDag& dag, const OpCosts& costs, const IosOptions& o)
      : g_(g), dag_(dag), costs_(costs), o_(o) {}
  Schedule run(IosStats* stats);

 private:
  struct Best {
    TimeNs cost = 0;
    std::vector<std::vector<int>> stage;  // groups of local unit indices
  };
  void build_units();
  void plan_part(const std::vector<int>& part, Schedule& s);
  TimeNs solve(uint32_t done);
  std::vector<int> chain(int u, uint32_t done) const;
  TimeNs stage_cost(const std::vector<std::vector<int>>& groups);

  const Graph& g_;
  const OpDag& dag_;
  const OpCosts& costs_;
  const IosOptions& o_;
  std::vector<Unit> units_;
  std::vector<int> unit_of_;                 // OpId -> unit
  std::vector<std::vector<int>> upred_, usucc_;  // unit DAG (deduplicated)
  std::vector<TimeNs> ubl_;                  // unit bottom level
  // the part being planned
  std::vector<int> local_;                   // local index -> unit
  std::vector<uint32_t> lpred_;              // local predecessor masks
  std::vector<std::vector<int>> lsucc_;
  uint32_t full_ = 0;
  std::unordered_map<uint32_t, Best> memo_;
  std::unordered_map<std::string, TimeNs> stage_memo_;
  std::vector<TimeNs> bl_;
  IosStats st_;
};

void IosPlanner::build_units() {
  const size_t n = g_.ops().size();
  std::vector<int> head(n, -1);
  unit_of_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    const Op& op = g_.ops()[i];
    if (op.phase != Phase::Optimizer) {
      unit_of_[i] = static_cast<int>(units_.size());
      units_.push_back({{op.id}, op.phase == Phase::Forward ? 0 : 1});
      continue;
    }
    int u = -1;  // the latest unit among its predecessors' units; the last backward unit if it has none
    for (OpId p : dag_.pred[i]) u = std::max(u, unit_of_[static_cast<size_t>(p)]);
    if (u < 0 || units_[static_cast<size_t>(u)].group == 0) {
      u = -1;
      for (size_t k = units_.size(); k-- > 0;)
        if (units_[k].group == 1) { u = static_cast<int>(k); break; }
      if (u < 0) {  // a graph with no backward op: the optimizer op is a unit of its own
        u = static_cast<int>(units_.size());
        units_.push_back({{}, 1});
      }
    }
    unit_of_[i] = u;
    units_[static_cast<size_t>(u)].ops.push_back(op.id);
  }
  const size_t nu = units_.size();
  upred_.assign(nu, {});
  usucc_.assign(nu, {});
  for (size_t i = 0; i < n; ++i)
    for (OpId v : dag_.succ[i]) {
      const int a = unit_of_[i], b = unit_of_[static_cast<size_t>(v)];
      if (a != b) {
        usucc_[static_cast<size_t>(a)].push_back(b);
        upred_[static_cast<size_t>(b)].push_back(a);
      }
    }
  for (auto* l : {&upred_, &usucc_})
    for (auto& v : *l) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    }
  for (size_t u = 0; u < nu; ++u)
    for (int p : upred_[u])
      if (p > static_cast<int>(u)) throw std::logic_error("ios: unit edge goes backwards (a bug)");
  bl_ = bottom_levels(g_, dag_, costs_.duration);
  ubl_.assign(nu, 0);
  for (size_t u = 0; u < nu; ++u)
    for (OpId o : units_[u].ops) ubl_[u] = std::max(ubl_[u], bl_[static_cast<size_t>(o)]);
}

std::vector<int> IosPlanner::chain(int u, uint32_t done) const {
  std::vector<int> c = {u};
  uint32_t have = done | (1u << u);
  while (static_cast<int>(c.size()) < o_.max_group_size) {
    int next = -1;
    for (int w : lsucc_[static_cast<size_t>(c.back())]) {
      if (have & (1u << w)) continue;
      if ((lpred_[static_cast<size_t>(w)] & ~have) != 0) continue;
      if (next < 0 || ubl_[static_cast<size_t>(local_[static_cast<size_t>(w)])] >
                          ubl_[static_cast<size_t>(local_[static_cast<size_t>(next)])])
        next = w;
    }
    if (next < 0) break;
    c.push_back(next);
    have |= 1u << next;
  }
  return c;
}

// Groups run on their own streams; ops are issued round-robin across the groups.
TimeNs IosPlanner::stage_cost(const std::vector<std::vector<int>>& groups) {
  std::string key;
  for (const auto& gr : groups) {
    for (int u : gr) key.push_back(static_cast<char>(u));
    key.push_back(static_cast<char>(127));
  }
  st_.work += key.size();  // looking a candidate up costs its size, remembered or not
  if (st_.work > o_.max_work)
    throw ScheduleLimitError("ios: the dynamic program passed max_work (" + std::to_string(o_.max_work) +
                             " units of candidate stages looked at) after " + std::to_string(st_.states) +
                             " states; lower r (" + std::to_string(o_.max_group_size) + "), s (" +
                             std::to_string(o_.max_num_groups) + ") or max_part_ops (" + std::to_string(o_.max_part_ops) +
                             "), or raise max_work");
  if (auto it = stage_memo_.find(key); it != stage_memo_.end()) return it->second;
  ++st_.stage_estimates;
  const size_t k = groups.size();
  std::vector<std::vector<OpId>> q(k);
  for (size_t j = 0; j < k; ++j)
    for (int u : groups[j])
      for (OpId o : units_[static_cast<size_t>(local_[static_cast<size_t>(u)])].ops) q[j].push_back(o);
  for (const auto& v : q) st_.work += v.size();  // an estimate steps once per op
  if (o_.stage_time) {
    const TimeNs cost = o_.stage_time(q);
    stage_memo_.emplace(std::move(key), cost);
    return cost;
  }
  // issue positions, round-robin by depth
  std::vector<std::vector<double>> issue(k);
  size_t pos = 0, depth = 0, total = 0;
  for (const auto& v : q) total += v.size();
  const double oh = static_cast<double>(o_.launch_overhead_ns);
  while (pos < total) {
    for (size_t j = 0; j < k; ++j)
      if (depth < q[j].size()) issue[j].push_back(oh * static_cast<double>(pos++));
    ++depth;
  }
  std::vector<size_t> head(k, 0);
  std::vector<double> rem(k, -1);  // remaining work of the running op, -1 none
  std::vector<double> demands, rates;
  std::vector<size_t> who;
  double now = 0;
  for (;;) {
    for (size_t j = 0; j < k; ++j)  // start heads that are issued; zero-time ops pass at once
      while (rem[j] < 0 && head[j] < q[j].size() && issue[j][head[j]] <= now + 1e-9) {
        const double d = static_cast<double>(costs_.duration[static_cast<size_t>(q[j][head[j]])]);
        if (d > 0) rem[j] = d;
        else ++head[j];
      }
    demands.clear();
    who.clear();
    for (size_t j = 0; j < k; ++j)
      if (rem[j] >= 0) {
        demands.push_back(costs_.demand[static_cast<size_t>(q[j][head[j]])]);
        who.push_back(j);
      }
    double next = std::numeric_limits<double>::infinity();
    fair_rates(demands, rates);
    for (size_t x = 0; x < who.size(); ++x) next = std::min(next, now + rem[who[x]] / rates[x]);
    for (size_t j = 0; j < k; ++j)
      if (rem[j] < 0 && head[j] < q[j].size()) next = std::min(next, issue[j][head[j]]);
    if (next == std::numeric_limits<double>::infinity()) break;
    const double dt = next - now;
    const double before = now;
    now = next;
    for (size_t x = 0; x < who.size(); ++x) {
      const size_t j = who[x];
      // Decided on the completion time, not the residue: at 1e15 ns a double's step exceeds it and `now` would
      // stop moving (schedule_estimate.cc has the same rule; the simulation fuzzer's seed 201568).
      const bool ends = before + rem[j] / rates[x] <= next;
      rem[j] -= dt * rates[x];
      if (ends || rem[j] <= 1e-6) {
        rem[j] = -1;
        ++head[j];
      }
    }
  }
  const TimeNs cost = std::max(static_cast<TimeNs>(now + 0.5), static_cast<TimeNs>(oh * static_cast<double>(total)));
  stage_memo_.emplace(std::move(key), cost);
  return cost;
}

TimeNs IosPlanner::solve(uint32_t done) {
  if (done == full_) return 0;
  if (auto it = memo_.find(done); it != memo_.end()) return it->second.cost;
  ++st_.states;
  const int m = static_cast<int>(local_.size());
  std::vector<int> ready;
  for (int u = 0; u < m; ++u)
    if (!(done & (1u << u)) && (lpred_[static_cast<size_t>(u)] & ~done) == 0) ready.push_back(u);
  std::stable_sort(ready.begin(), ready.end(), [&](int a, int b) {
    return ubl_[static_cast<size_t>(local_[static_cast<size_t>(a)])] > ubl_[static_cast<size_t>(local_[static_cast<size_t>(b)])];
  });
  Best best;
  best.cost = std::numeric_limits<TimeNs>::max();
  auto consider = [&](std::vector<std::vector<int>> groups) {
    uint32_t add = 0;
    for (const auto& gr : groups)
      for (int u : gr) add |= 1u << u;
    const TimeNs c = stage_cost(groups) + solve(done | add);
    if (c < best.cost) {
      best.cost = c;
      best.stage = std::move(groups);
    }
  };
  // Only the s ready units with the longest remaining paths start a group (IOS bounds its candidates with s the
  // same way). This bounds the states the DP reaches too: a graph whose backward pass is 16 units wide
  // (DenseNet's gradient sums) would otherwise visit every one of the 2^16 downsets of a part.
  const int top = std::min({static_cast<int>(ready.size()), std::max(o_.max_num_groups, 1), std::max(o_.max_streams, 1)});
  std::vector<std::vector<int>> chains;
  for (int j = 0; j < top; ++j) chains.push_back(chain(ready[static_cast<size_t>(j)], done));
  for (const auto& c : chains)  // single groups, every length: a serial order is among the candidates
    for (size_t len = 1; len <= c.size(); ++len) consider({std::vector<int>(c.begin(), c.begin() + static_cast<long>(len))});
  for (uint32_t subset = 1; subset < (1u << top); ++subset) {
    if ((subset & (subset - 1)) == 0) continue;  // one group: done above
    std::vector<std::vector<int>> groups;
    for (int j = 0; j < top; ++j)
      if (subset & (1u << j)) groups.push_back(chains[static_cast<size_t>(j)]);
    consider(std::move(groups));
  }
  const TimeNs c = best.cost;
  memo_.emplace(done, std::move(best));
  return c;
}

void IosPlanner::plan_part(const std::vector<int>& part, Schedule& s) {
  ++st_.parts;
  local_ = part;
  const int m = static_cast<int>(part.size());
  std::unordered_map<int, int> local_of;
  for (int i = 0; i < m; ++i) local_of[part[static_cast<size_t>(i)]] = i;
  lpred_.assign(static_cast<size_t>(m), 0);
  lsucc_.assign(static_cast<size_t>(m), {});
  for (int i = 0; i < m; ++i)
    for (int p : upred_[static_cast<size_t>(part[static_cast<size_t>(i)])])
      if (auto it = local_of.find(p); it != local_of.end()) {
        lpred_[static_cast<size_t>(i)] |= 1u << it->second;
        lsucc_[static_cast<size_t>(it->second)].push_back(i);
      }
  full_ = m == 32 ? ~0u : (1u << m) - 1;
  memo_.clear();
  stage_memo_.clear();
  st_.estimated_ns += solve(0);
  uint32_t done = 0;
  while (done != full_) {
    const auto& groups = memo_.at(done).stage;
    size_t depth_max = 0;
    std::vector<std::vector<OpId>> q;
    for (const auto& gr : groups) {
      q.emplace_back();
      for (int u : gr) {
        for (OpId o : units_[static_cast<size_t>(local_[static_cast<size_t>(u)])].ops) q.back().push_back(o);
        done |= 1u << u;
      }
      depth_max = std::max(depth_max, q.back().size());
    }
    for (size_t d = 0; d < depth_max; ++d)
      for (size_t j = 0; j < q.size(); ++j)
        if (d < q[j].size()) {
          s.order.push_back(q[j][d]);
          s.stream_of[static_cast<size_t>(q[j][d])] = static_cast<int>(j);
        }
  }
}

Schedule IosPlanner::run(IosStats* stats) {
  if (o_.max_part_ops < 1 || o_.max_part_ops > 24) throw std::invalid_argument("ios: max_part_ops must be in 1..24");
  build_units();
  const size_t nu = units_.size();
  // ASAP level of each unit within its phase group, then the sequence sorted by (group, level, id).
  std::vector<int> level(nu, 0);
  for (size_t u = 0; u < nu; ++u)
    for (int p : upred_[u])
      if (units_[static_cast<size_t>(p)].group == units_[u].group) level[u] = std::max(level[u], level[static_cast<size_t>(p)] + 1);
  std::vector<int> seq(nu);
  for (size_t u = 0; u < nu; ++u) seq[u] = static_cast<int>(u);
  std::stable_sort(seq.begin(), seq.end(), [&](int a, int b) {
    const auto& ua = units_[static_cast<size_t>(a)];
    const auto& ub = units_[static_cast<size_t>(b)];
    if (ua.group != ub.group) return ua.group < ub.group;
    return level[static_cast<size_t>(a)] < level[static_cast<size_t>(b)];
  });
  std::vector<int> pos(nu);
  for (size_t i = 0; i < nu; ++i) pos[static_cast<size_t>(seq[i])] = static_cast<int>(i);
  Schedule s;
  s.num_streams = std::max(1, o_.max_streams);
  s.stream_of.assign(g_.ops().size(), 0);
  std::vector<int> part;
  int reach = -1;  // the furthest position an edge from the units before the current one reaches
  for (size_t i = 0; i < nu; ++i) {
    const int u = seq[i];
    part.push_back(u);
    const bool last = i + 1 == nu;
    const bool group_ends = last || units_[static_cast<size_t>(seq[i + 1])].group != units_[static_cast<size_t>(u)].group;
    const bool narrows = reach <= static_cast<int>(i);  // every edge from earlier units ends here at the latest
    for (int v : usucc_[static_cast<size_t>(u)])  // edges into the other phase are met by the phase boundary
      if (units_[static_cast<size_t>(v)].group == units_[static_cast<size_t>(u)].group)
        reach = std::max(reach, pos[static_cast<size_t>(v)]);
    if (group_ends || narrows || static_cast<int>(part.size()) >= o_.max_part_ops) {
      plan_part(part, s);
      part.clear();
    }
  }
  compact_streams(s);
  if (stats) *stats = st_;
  return s;
}

}  // namespace

Schedule ios_schedule(const Graph& g, const OpDag& dag, const OpCosts& costs, const IosOptions& o, IosStats* stats) {
  return IosPlanner(g, dag, costs, o).run(stats);
}

}  // namespace dlsim
