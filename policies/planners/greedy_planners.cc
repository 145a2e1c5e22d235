#include "policies/planners/greedy_planners.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "policies/planners/gap_placer.h"
#include "policies/planners/load.h"

namespace dlsim {

std::vector<size_t> greedy_order(const std::vector<DsaBuffer>& b, GreedyOrder order) {
  std::vector<size_t> idx(b.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  auto len = [&](size_t i) { return b[i].upper - b[i].lower; };
  switch (order) {
    case GreedyOrder::BySizeThenLower:
      std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
        if (b[x].size != b[y].size) return b[x].size > b[y].size;
        if (b[x].lower != b[y].lower) return b[x].lower < b[y].lower;
        return x < y;
      });
      break;
    case GreedyOrder::Spatial:
      std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
        if (b[x].size != b[y].size) return b[x].size > b[y].size;
        if (len(x) != len(y)) return len(x) > len(y);
        return x < y;
      });
      break;
    case GreedyOrder::Temporal:
      std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) {
        if (len(x) != len(y)) return len(x) > len(y);
        if (b[x].size != b[y].size) return b[x].size > b[y].size;
        return x < y;
      });
      break;
  }
  return idx;
}

std::vector<uint64_t> place_best_fit_in_order(const std::vector<DsaBuffer>& buffers,
                                              const std::vector<size_t>& order) {
  std::vector<uint64_t> offsets(buffers.size(), 0);
  // Placed buffers kept sorted by (offset, index) so that each search scans them in address order without
  // sorting; inserting is a memmove.
  std::vector<std::pair<uint64_t, size_t>> placed;
  placed.reserve(buffers.size());
  std::vector<PlacedRange> occupied;
  for (size_t i : order) {
    const DsaBuffer& b = buffers[i];
    occupied.clear();
    for (const auto& [off, j] : placed)
      if (lifetimes_overlap(b, buffers[j])) occupied.push_back({off, off + buffers[j].size});
    const uint64_t off = best_fit_offset(occupied, b.size);
    offsets[i] = off;
    placed.insert(std::upper_bound(placed.begin(), placed.end(), std::make_pair(off, i)), {off, i});
  }
  return offsets;
}

void finish_heuristic_result(const std::vector<DsaBuffer>& buffers, PlanResult& r) {
  r.height = placement_height(buffers, r.offsets);
  r.lower_bound = compute_load(buffers);
  r.optimal = r.height == r.lower_bound;
}

PlanResult plan_greedy_by_size(const std::vector<DsaBuffer>& buffers) {
  PlanResult r;
  r.offsets = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::BySizeThenLower));
  finish_heuristic_result(buffers, r);
  return r;
}

PlanResult plan_best_fit(const std::vector<DsaBuffer>& buffers, const std::string& order) {
  if (order != "spatial" && order != "temporal" && order != "both")
    throw std::invalid_argument("best-fit order must be spatial, temporal or both, not '" + order + "'");
  PlanResult r;
  if (order != "temporal") r.offsets = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::Spatial));
  if (order != "spatial") {
    auto t = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::Temporal));
    if (r.offsets.empty() || placement_height(buffers, t) < placement_height(buffers, r.offsets))
      r.offsets = std::move(t);
  }
  finish_heuristic_result(buffers, r);
  return r;
}

namespace {

class GreedyBySizePlanner : public Planner {
 public:
  std::string name() const override { return "greedy-by-size"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override { return plan_greedy_by_size(b); }
};

class BestFitPlanner : public Planner {
 public:
  explicit BestFitPlanner(std::string order) : order_(std::move(order)) {}
  std::string name() const override { return "best-fit"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override { return plan_best_fit(b, order_); }

 private:
  std::string order_;
};

}  // namespace

void register_greedy_planners(PlannerRegistry& r) {
  r.add({"greedy-by-size",
         "TFLite/Pisarchyk-Lee greedy by size: size descending (ties: lower, file order), smallest fitting gap",
         {},
         [](const Params&) -> std::unique_ptr<Planner> { return std::make_unique<GreedyBySizePlanner>(); }});
  r.add({"best-fit",
         "XLA-style global decreasing-size best fit (spatial and temporal orders, keeps the lower heap)",
         {{"order", ParamType::String, std::string("both"), "spatial, temporal, or both (keep the better)"}},
         [](const Params& p) -> std::unique_ptr<Planner> {
           const std::string o = p.get_string("order");
           if (o != "spatial" && o != "temporal" && o != "both")
             throw ConfigError("", 0, "order", "best-fit order must be spatial, temporal or both, not '" + o + "'");
           return std::make_unique<BestFitPlanner>(o);
         }});
}

}  // namespace dlsim
