#pragma once
// The op DAG in the form the concurrency policies walk it: successor and predecessor lists (Graph::dag()'s
// edges, duplicates dropped), with the analyses they share: longest paths, ASAP stages and their widths.
#include <cstdint>
#include <vector>

#include "hw/cost_model.h"
#include "workloads/graph.h"

namespace dlsim {

struct OpDag {
  std::vector<std::vector<OpId>> succ, pred;  // indexed by OpId, each sorted
  size_t size() const { return succ.size(); }
};

OpDag op_dag(const Graph& g);

// Standalone kernel times (KernelCost::duration_ns) and SM shares of every op, variant 0.
struct OpCosts {
  std::vector<TimeNs> duration;
  std::vector<double> demand;
};
OpCosts op_costs(const Graph& g, const KernelCostModel& cost);

// Per op, the longest path from it to any sink, its own duration included (list scheduling's priority).
std::vector<TimeNs> bottom_levels(const Graph& g, const OpDag& dag, const std::vector<TimeNs>& duration);

// The critical path of the DAG: the iteration time with infinite SMs, no launch cost and each kernel at its
// standalone time, a bound no schedule can beat. `duration` is per op; the fastest variant's time where there
// are several.
TimeNs critical_path_ns(const Graph& g, const OpDag& dag, const std::vector<TimeNs>& duration);

// The fastest standalone time of every op over its kernel variants (what critical_path_ns needs for a bound).
std::vector<TimeNs> fastest_durations(const Graph& g, const KernelCostModel& cost);

// The graph's width per ASAP stage (the number of ops that could run at once, the SPAA paper's motivating
// figure): stage of an op = 1 + the largest stage of its predecessors within `phases`, over the sub-DAG of ops
// whose phase is in `phases` (edges from ops outside it are taken as satisfied). Ops that launch no kernel
// (views: no FLOPs, no bytes) pass their stage on but are not counted.
std::vector<int> stage_widths(const Graph& g, const OpDag& dag, const std::vector<Phase>& phases);

// True when `order` lists every op once and every edge goes forward; otherwise `why` names the first offender.
bool is_topological(const Graph& g, const OpDag& dag, const std::vector<OpId>& order, std::string* why = nullptr);

}  // namespace dlsim
