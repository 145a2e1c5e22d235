#include "policies/planners/greedy_planners.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "common/param_binding.h"
#include "policies/planners/gap_placer.h"
#include "policies/planners/lifetime_index.h"
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

namespace {
// The index serves a buffer when fewer than 1/kIndexBelowFraction of the placed buffers meet it: below that, k
// tree leaves and a sort of k cost less than a contiguous scan of all (measured on the shared instances, where
// most buffers meet and the scan wins, and on generated ones of short lifetimes, where the index does).
constexpr size_t kIndexBelowFraction = 64;

struct Placed {
  uint64_t offset;
  size_t index;
  int64_t lower, upper;
  uint64_t end;
  bool operator<(const Placed& o) const { return offset < o.offset || (offset == o.offset && index < o.index); }
};

// Placed buffers in (offset, index) order, in consecutive sorted blocks.
class SortedPlaced {
 public:
  static constexpr size_t kBlock = 256;
  void insert(const Placed& e) {
    ++size_;
    if (blocks_.empty()) {
      blocks_.push_back({e});
      return;
    }
    auto at = std::partition_point(blocks_.begin(), blocks_.end(),
                                   [&](const std::vector<Placed>& v) { return v.back() < e; });
    if (at == blocks_.end()) --at;  // above everything: the last block's end
    at->insert(std::upper_bound(at->begin(), at->end(), e), e);
    if (at->size() > 2 * kBlock) {
      std::vector<Placed> upper(at->begin() + static_cast<std::ptrdiff_t>(kBlock), at->end());
      at->resize(kBlock);
      blocks_.insert(at + 1, std::move(upper));
    }
  }
  size_t size() const { return size_; }
  const std::vector<std::vector<Placed>>& blocks() const { return blocks_; }

 private:
  std::vector<std::vector<Placed>> blocks_;
  size_t size_ = 0;
};
}  // namespace

std::vector<uint64_t> place_best_fit_in_order(const std::vector<DsaBuffer>& buffers, const std::vector<size_t>& order,
                                              std::chrono::steady_clock::time_point deadline, bool* finished) {
  const bool timed = deadline != std::chrono::steady_clock::time_point::max();
  if (finished) *finished = true;
  std::vector<uint64_t> offsets(buffers.size(), 0);
  uint64_t top = 0;  // the highest end placed so far
  // Placed buffers kept sorted by (offset, index), so that a scan reads them in address order without sorting, in
  // blocks of at most 2 x kBlock (an insert moves one block, not everything above it: on 200k buffers the single
  // array's memmoves alone were quadratic). Each entry carries its lifetime, so that the scan reads contiguous
  // memory (on 28k-buffer instances where most buffers meet, the scan is the planner's whole cost). Where few
  // placed buffers meet the next one (counted first, lifetime_index.h), the index finds them and only they are
  // sorted: the scan of every placed buffer made best fit quadratic on long instances of short lifetimes.
  SortedPlaced placed;
  LifetimeIndex index(buffers);
  std::vector<size_t> hits;
  std::vector<std::pair<uint64_t, size_t>> by_offset;
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
    if (index.count_conflicts(b) * kIndexBelowFraction < placed.size()) {
      hits.clear();
      index.conflicts(b, hits);
      by_offset.clear();
      for (size_t j : hits) by_offset.emplace_back(offsets[j], j);
      std::sort(by_offset.begin(), by_offset.end());
      for (const auto& [off, j] : by_offset) occupied.push_back({off, off + buffers[j].size});
    } else {
      for (const auto& block : placed.blocks())
        for (const auto& p : block)
          if (p.lower < b.upper && b.lower < p.upper) occupied.push_back({p.offset, p.end});
    }
    const uint64_t off = best_fit_offset(occupied, b.size);
    offsets[i] = off;
    top = std::max(top, off + b.size);
    placed.insert({off, i, b.lower, b.upper, off + b.size});
    index.place(i);
  }
  return offsets;
}

void finish_heuristic_result(const std::vector<DsaBuffer>& buffers, PlanResult& r) {
  r.height = placement_height(buffers, r.offsets);
  r.lower_bound = compute_load(buffers);
  r.optimal = r.height == r.lower_bound;
}

namespace {

std::chrono::steady_clock::time_point deadline_after(double seconds) {
  if (!(seconds < kMaxPlannerTimeLimitS)) return std::chrono::steady_clock::time_point::max();
  return std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

PlanResult plan_greedy_by_size(const std::vector<DsaBuffer>& buffers, double time_limit_s) {
  PlanResult r;
  bool finished = true;
  r.offsets = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::BySizeThenLower),
                                      deadline_after(time_limit_s), &finished);
  finish_heuristic_result(buffers, r);
  r.complete = finished;
  return r;
}

PlanResult plan_best_fit(const std::vector<DsaBuffer>& buffers, const std::string& order, double time_limit_s) {
  if (order != "spatial" && order != "temporal" && order != "both")
    throw std::invalid_argument("best-fit order must be spatial, temporal or both, not '" + order + "'");
  const auto deadline = deadline_after(time_limit_s);  // for the whole plan: both orders share it
  PlanResult r;
  bool finished = true;
  if (order != "temporal")
    r.offsets = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::Spatial), deadline, &finished);
  if (order != "spatial") {
    bool t_finished = true;
    auto t = place_best_fit_in_order(buffers, greedy_order(buffers, GreedyOrder::Temporal), deadline, &t_finished);
    if (r.offsets.empty() || placement_height(buffers, t) < placement_height(buffers, r.offsets)) {
      r.offsets = std::move(t);
      finished = t_finished;
    }
  }
  finish_heuristic_result(buffers, r);
  r.complete = finished;
  return r;
}

namespace {

// Both one-pass planners: a wall-clock limit, as the optimal planner has, so that no instance makes them run on.
struct GreedyOptions {
  std::string order = "both";  // best-fit only
  double time_limit_s = 60;

  static ParamBindings<GreedyOptions> time_limit() {
    return ParamBindings<GreedyOptions>().add(
        "time_limit_s", &GreedyOptions::time_limit_s,
        "wall-clock budget in seconds; past it the buffers not yet placed are stacked on top (a valid but higher "
        "placement, reported as stopped, that depends on the machine)",
        ParamCheck::above_up_to(0, kMaxPlannerTimeLimitS));
  }
  static const ParamBindings<GreedyOptions>& greedy_by_size_parameters() {
    static const auto b = time_limit();
    return b;
  }
  static const ParamBindings<GreedyOptions>& best_fit_parameters() {
    static const auto b = ParamBindings<GreedyOptions>()
                              .add("order", &GreedyOptions::order, "spatial, temporal, or both (keep the better)",
                                   ParamCheck::one_of({"spatial", "temporal", "both"}))
                              .add_all(time_limit());
    return b;
  }
};

class GreedyBySizePlanner : public Planner {
 public:
  explicit GreedyBySizePlanner(GreedyOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "greedy-by-size"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override { return plan_greedy_by_size(b, o_.time_limit_s); }

 private:
  GreedyOptions o_;
};

class BestFitPlanner : public Planner {
 public:
  explicit BestFitPlanner(GreedyOptions o) : o_(std::move(o)) {}
  std::string name() const override { return "best-fit"; }
  PlanResult plan(const std::vector<DsaBuffer>& b) const override {
    return plan_best_fit(b, o_.order, o_.time_limit_s);
  }

 private:
  GreedyOptions o_;
};

}  // namespace

void register_greedy_planners(PlannerRegistry& r) {
  r.add({"greedy-by-size",
         "TFLite/Pisarchyk-Lee greedy by size: size descending (ties: lower, file order), smallest fitting gap",
         GreedyOptions::greedy_by_size_parameters().specs(), [](const Params& p) -> std::unique_ptr<Planner> {
           return std::make_unique<GreedyBySizePlanner>(GreedyOptions::greedy_by_size_parameters().from_params(p));
         }});
  r.add({"best-fit",
         "XLA-style global decreasing-size best fit (spatial and temporal orders, keeps the lower heap)",
         GreedyOptions::best_fit_parameters().specs(), [](const Params& p) -> std::unique_ptr<Planner> {
           return std::make_unique<BestFitPlanner>(GreedyOptions::best_fit_parameters().from_params(p));
         }});
}

}  // namespace dlsim
