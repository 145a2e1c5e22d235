#include "policies/planners/greedy_planners.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "common/param_binding.h"
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
  return place_best_fit_in_order(buffers, order, std::chrono::steady_clock::time_point::max(), nullptr);
}

std::vector<uint64_t> place_best_fit_in_order(const std::vector<DsaBuffer>& buffers, const std::vector<size_t>& order,
                                              std::chrono::steady_clock::time_point deadline, bool* finished) {
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  if (finished) *finished = true;
  std::vector<uint64_t> offsets(buffers.size(), 0);
  uint64_t top = 0;  // the highest end placed so far
  // Placed buffers kept sorted by (offset, index) so that each search scans them in address order without
  // sorting; inserting is a memmove. Each entry carries its lifetime, so that the scan reads one contiguous
  // array (on 28k-buffer instances the scan is the planner's whole cost).
  struct Placed {
    uint64_t offset;
    size_t index;
    int64_t lower, upper;
    uint64_t end;
    bool operator<(const Placed& o) const { return offset < o.offset || (offset == o.offset && index < o.index); }
  };
  std::vector<Placed> placed;
  placed.reserve(buffers.size());
  std::vector<PlacedRange> occupied;
  for (size_t k = 0; k < order.size(); ++k) {
    if (timed && (k & 63) == 0 && std::chrono::steady_clock::now() >= deadline) {
      if (finished) *finished = false;
      for (; k < order.size(); ++k) {
        offsets[order[k]] = top;
        top += buffers[order[k]].size;
      }
      break;
    }
    const size_t i = order[k];
    const DsaBuffer& b = buffers[i];
    occupied.clear();
    for (const auto& p : placed)
      if (p.lower < b.upper && b.lower < p.upper) occupied.push_back({p.offset, p.end});
    const uint64_t off = best_fit_offset(occupied, b.size);
    offsets[i] = off;
    top = std::max(top, off + b.size);
    const Placed entry{off, i, b.lower, b.upper, off + b.size};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), entry), entry);
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

struct BestFitOptions {
  std::string order = "both";

  static const ParamBindings<BestFitOptions>& parameters() {
    static const auto b = ParamBindings<BestFitOptions>().add(
        "order", &BestFitOptions::order, "spatial, temporal, or both (keep the better)",
        ParamCheck::one_of({"spatial", "temporal", "both"}));
    return b;
  }
};

class BestFitPlanner : public Planner {
 public:
  explicit BestFitPlanner(BestFitOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "best-fit"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override { return plan_best_fit(b, o_.order); }

 private:
  BestFitOptions o_;
};

}  // namespace

void register_greedy_planners(PlannerRegistry& r) {
  r.add({"greedy-by-size",
         "TFLite/Pisarchyk-Lee greedy by size: size descending (ties: lower, file order), smallest fitting gap",
         {},
         [](const Params&) -> std::unique_ptr<Planner> { return std::make_unique<GreedyBySizePlanner>(); }});
  r.add({"best-fit",
         "XLA-style global decreasing-size best fit (spatial and temporal orders, keeps the lower heap)",
         BestFitOptions::parameters().specs(), [](const Params& p) -> std::unique_ptr<Planner> {
           return std::make_unique<BestFitPlanner>(BestFitOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
