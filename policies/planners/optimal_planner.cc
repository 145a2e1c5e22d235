#include "policies/planners/optimal_planner.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#include "common/config_error.h"
#include "common/strings.h"
#include "policies/planners/greedy_planners.h"
#include "policies/planners/load.h"
#include "policies/planners/peak_orders.h"

namespace dlsim {

namespace {

using Clock = std::chrono::steady_clock;

// Index sets of the time-independent parts: buffers sorted by start, a new part beginning whenever a start is
// at or after every earlier end.
std::vector<std::vector<size_t>> split_in_time(const std::vector<DsaBuffer>& b) {
  std::vector<size_t> idx(b.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return b[x].lower < b[y].lower || (b[x].lower == b[y].lower && x < y); });
  std::vector<std::vector<size_t>> parts;
  int64_t reach = 0;
  for (size_t i : idx) {
    if (parts.empty() || b[i].lower >= reach) parts.emplace_back();
    parts.back().push_back(i);
    reach = parts.back().size() == 1 ? b[i].upper : std::max(reach, b[i].upper);
  }
  for (auto& p : parts) std::sort(p.begin(), p.end());
  return parts;
}

struct Part {
  std::vector<size_t> members;
  std::vector<DsaBuffer> buffers;
  ConflictGraph graph;  // built on the part's first probe
  uint64_t height = 0;  // of the best placement's restriction to this part
};

class OptimalDriver {
 public:
  OptimalDriver(const std::vector<DsaBuffer>& b, const OptimalOptions& o) : b_(b), o_(o), start_(Clock::now()) {
    // A little of the limit is kept back for what follows the last clock check: leaving a search, freeing its
    // conflict graph (hundreds of MB on the largest instances) and returning the placement.
    const double limit = std::min(o.time_limit_s, kMaxPlannerTimeLimitS);  // plan_optimal checked it; stay safe
    const double reserve = std::min(0.3, 0.05 * limit);
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit - reserve));
  }

  PlanResult run() {
    const uint64_t load = compute_load(b_);
    uint64_t lo = load;
    uint64_t hi = run_heuristics(load);
    if (lo < hi && !budget_spent()) {
      for (auto& m : split_in_time(b_)) {
        Part p;
        p.members = std::move(m);
        for (size_t i : p.members) p.buffers.push_back(b_[i]);
        parts_.push_back(std::move(p));
      }
      refresh_part_heights();
      // Most of the budget goes to the probe at the lower bound: on the instances where the optimum is LOAD
      // that probe is the whole job, and a probe above it only helps once it has failed.
      SearchOutcome first = probe(lo, share_of_remaining(kFirstProbeShare));
      if (first == SearchOutcome::Found) hi = placement_height(b_, best_);
      if (first == SearchOutcome::Infeasible) ++lo;
      uint64_t from = first == SearchOutcome::Stopped ? lo + 1 : lo;
      while (from < hi && lo < hi && !budget_spent()) {
        const uint64_t mid = from + (hi - 1 - from) / 2;
        const SearchOutcome out = probe(mid, share_of_remaining(0.5));
        if (out == SearchOutcome::Found) {
          hi = placement_height(b_, best_);
        } else {
          if (out == SearchOutcome::Infeasible) lo = std::max(lo, mid + 1);
          from = mid + 1;
        }
      }
    }
    PlanResult r;
    r.offsets = best_;
    r.height = hi;
    r.lower_bound = lo;
    r.optimal = lo == hi;
    r.nodes = nodes_;
    return r;
  }

 private:
  struct Budget {
    Clock::time_point deadline;
    uint64_t nodes;
  };

  bool budget_spent() const {
    return Clock::now() >= deadline_ || (o_.node_limit && nodes_ >= o_.node_limit);
  }
  Budget share_of_remaining(double share) const {
    const auto now = Clock::now();
    const auto left = std::chrono::duration<double>(deadline_ - now) * share;
    Budget b{now + std::chrono::duration_cast<Clock::duration>(left), 0};
    if (o_.node_limit) {
      const uint64_t rest = o_.node_limit - std::min(nodes_, o_.node_limit);
      b.nodes = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(rest) * share));
    }
    return b;
  }

  // The starting placement: best fit in several orders (greedy-by-size's, the two peak-first orders of
  // peak_orders.h, XLA's spatial and temporal), each followed by a repair: re-place with the buffers that stuck
  // out above LOAD moved to the front (promote_above), while that keeps lowering the height (at most
  // kRepairRounds times). Keeps the lowest; stops at LOAD or when the deadline passes (a placer cut short
  // stacks its remaining buffers on top, so there is always a valid placement). The first placement is made
  // even when the deadline has already passed: a plan without one is no plan. Returns the best height.
  uint64_t run_heuristics(uint64_t load) {
    uint64_t best = UINT64_MAX;
    auto done = [&] { return best <= load || Clock::now() >= deadline_; };
    auto chain = [&](std::vector<size_t> order) {
      uint64_t chain_best = UINT64_MAX;
      for (int round = 0; round <= kRepairRounds && (best_.empty() || !done()); ++round) {
        auto offs = place_best_fit_in_order(b_, order, deadline_, nullptr);
        const uint64_t h = placement_height(b_, offs);
        if (h < best) {
          best = h;
          best_ = offs;
        }
        if (h >= chain_best) break;
        chain_best = h;
        order = promote_above(b_, order, offs, load);
      }
      return !done();
    };
    if (!chain(greedy_order(b_, GreedyOrder::BySizeThenLower))) return best;
    const auto peaks = buffer_peaks(b_);
    if (!chain(peak_order(b_, peaks, PeakOrder::PeakThenSize))) return best;
    if (!chain(peak_order(b_, peaks, PeakOrder::PeakThenWidth))) return best;
    if (!chain(greedy_order(b_, GreedyOrder::Spatial))) return best;
    chain(greedy_order(b_, GreedyOrder::Temporal));
    return best;
  }

  void refresh_part_heights() {
    for (auto& p : parts_) {
      p.height = 0;
      for (size_t i : p.members) p.height = std::max(p.height, best_[i] + b_[i].size);
    }
  }

  // Tries to bring every part to height <= capacity. The parts already there keep their placement.
  SearchOutcome probe(uint64_t capacity, const Budget& budget) {
    std::vector<std::pair<size_t, std::vector<uint64_t>>> found;
    const uint64_t nodes_at_start = nodes_;
    for (size_t k = 0; k < parts_.size(); ++k) {
      if (parts_[k].height <= capacity) continue;
      SearchLimits lim;
      lim.deadline = budget.deadline;
      if (budget.nodes) {
        const uint64_t used = nodes_ - nodes_at_start;
        if (used >= budget.nodes) return SearchOutcome::Stopped;
        lim.node_limit = budget.nodes - used;
      }
      Part& p = parts_[k];
      if (!p.graph.complete) p.graph = build_conflict_graph(p.buffers, budget.deadline);
      if (!p.graph.complete) return SearchOutcome::Stopped;
      SearchResult r = search_capacity(p.buffers, p.graph, capacity, lim, o_.preorder);
      nodes_ += r.nodes;
      if (r.outcome != SearchOutcome::Found) return r.outcome;
      found.emplace_back(k, std::move(r.offsets));
    }
    for (auto& [k, offs] : found)
      for (size_t j = 0; j < offs.size(); ++j) best_[parts_[k].members[j]] = offs[j];
    refresh_part_heights();
    return SearchOutcome::Found;
  }

  const std::vector<DsaBuffer>& b_;
  OptimalOptions o_;
  Clock::time_point start_, deadline_;
  static constexpr double kFirstProbeShare = 0.85;
  static constexpr int kRepairRounds = 3;
  std::vector<Part> parts_;
  std::vector<uint64_t> best_;
  uint64_t nodes_ = 0;
};

class OptimalPlanner : public Planner {
 public:
  explicit OptimalPlanner(OptimalOptions o) : o_(o) {}
  std::string name() const override { return "optimal"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override { return plan_optimal(b, o_); }

 private:
  OptimalOptions o_;
};

}  // namespace

PlanResult plan_optimal(const std::vector<DsaBuffer>& buffers, const OptimalOptions& options) {
  if (!(options.time_limit_s > 0 && options.time_limit_s <= kMaxPlannerTimeLimitS))
    throw ConfigError("", 0, "time_limit_s",
                      "the optimal planner needs a time limit in (0, 1e9] s");
  if (buffers.empty()) return PlanResult{{}, 0, 0, true, 0, true};
  return OptimalDriver(buffers, options).run();
}

const ParamBindings<OptimalOptions>& OptimalOptions::parameters() {
  using O = OptimalOptions;
  static const auto b = ParamBindings<O>()
      .add("time_limit_s", &O::time_limit_s, "wall-clock budget in seconds",
           ParamCheck::above_up_to(0, kMaxPlannerTimeLimitS))
      .add("node_limit", &O::node_limit, "total search nodes, 0 for none (deterministic when set)",
           ParamCheck::at_least(0))
      .add_choice("preorder", &O::preorder,
                  ParamChoices<Preorder>{{"round-robin", Preorder::RoundRobin},
                                         {"wat", Preorder::WidthAreaTotal},
                                         {"taw", Preorder::TotalAreaWidth},
                                         {"twa", Preorder::TotalWidthArea}},
                  "priority among equal lowest offsets: round-robin (restarts over all three), wat, taw, twa "
                  "(W = lifetime width, A = area, T = largest section total)");
  return b;
}

void register_optimal_planner(PlannerRegistry& r) {
  r.add({"optimal",
         "exact search over canonical placements (MiniMalloc's algorithm: section inference, dominance, "
         "unplaced floors, dynamic decomposition with a fresh preorder per part, round-robin preorders; plus a "
         "raised-stack test and jittered restarts); proves optimality or reports the gap",
         OptimalOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<Planner> {
           return std::make_unique<OptimalPlanner>(OptimalOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
