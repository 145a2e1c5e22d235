#include "policies/pool/planned_pool.h"

#include <algorithm>
#include <map>

#include "common/param_binding.h"
#include "policies/planners/load.h"
#include "policies/planners/optimal_planner.h"

namespace dlsim {

PlannedPool::PlannedPool(DeviceMemory& device, std::unique_ptr<Planner> planner)
    : planner_(std::move(planner)), arena_(device) {}

std::optional<DevPtr> PlannedPool::allocate(const AllocRequest& req) {
  if (profiling_) {
    auto p = arena_.fallback(req.bytes);
    if (p) profile_.push_back({true, *p, req.bytes});
    return p;
  }
  std::optional<DevPtr> p;
  if (told_iteration_begin_) {
    if (position_ < slot_at_.size() && slot_at_[position_] >= 0) {
      const Slot& s = slots_[static_cast<size_t>(slot_at_[position_])];
      if (s.size == req.bytes) p = arena_.take_slot(s.offset, s.extent, req.bytes);
    }
    if (!p) p = arena_.fallback(req.bytes);
    if (p) ++position_;  // a request the device refused is not one of the iteration's Mallocs
    return p;
  }
  if (position_ < slots_.size() && slots_[position_].size == req.bytes) {  // the next planned slot, by size
    const Slot& s = slots_[position_];
    p = arena_.take_slot(s.offset, s.extent, req.bytes);
    if (p) ++position_;
  }
  if (!p) p = arena_.fallback(req.bytes);
  return p;
}

void PlannedPool::deallocate(DevPtr p) {
  arena_.release(p);
  if (profiling_) profile_.push_back({false, p, 0});
}

void PlannedPool::iteration_begin(int iteration) {
  if (profiling_ && iteration == 0) {
    profile_begin_ = profile_.size();
    told_iteration_begin_ = true;
  }
  position_ = 0;
}

void PlannedPool::iteration_end(int /*iteration*/) {
  if (profiling_) {
    profiling_ = false;
    make_plan();
    profile_.clear();
    profile_.shrink_to_fit();
    fallbacks_before_plan_ = arena_.fallbacks();
  }
  position_ = 0;
}

void PlannedPool::make_plan() {
  std::map<DevPtr, size_t> open;                 // pointer -> index of its pending Malloc in profile_
  std::map<size_t, size_t> freed_at;             // the iteration's Malloc index -> its Free's index
  for (size_t i = 0; i < profile_.size(); ++i) {
    if (profile_[i].is_malloc) {
      open[profile_[i].ptr] = i;
      ++profile_mallocs_;
    } else if (auto it = open.find(profile_[i].ptr); it != open.end()) {
      // A setup block freed here (a swapped weight's first residency) is no Malloc of the iteration's.
      if (it->second >= profile_begin_) freed_at[it->second] = i;
      else ++setup_freed_;
      open.erase(it);
    }
  }
  for (const auto& [ptr, m] : open) ++(m >= profile_begin_ ? crossing_ : persistent_);
  std::vector<DsaBuffer> buffers;
  for (const auto& [m, f] : freed_at) {
    DsaBuffer b;
    b.id = static_cast<int64_t>(buffers.size());
    b.lower = static_cast<int64_t>(m);
    b.upper = static_cast<int64_t>(f);
    // Each buffer's extent is its size rounded up to kPlanAlignment, so that every planned offset is aligned.
    b.size = (std::max<uint64_t>(profile_[m].size, 1) + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
    buffers.push_back(b);
  }
  if (buffers.empty()) return;
  const PlanResult r = planner_->plan(buffers);
  load_ = compute_load(buffers);
  height_ = r.height;
  lower_bound_ = r.lower_bound;
  proved_optimal_ = r.optimal;
  nodes_ = r.nodes;
  if (!arena_.reserve(height_)) {
    reservation_failed_ = true;
    return;
  }
  size_t k = 0;
  for (size_t i = profile_begin_; i < profile_.size(); ++i) {
    if (!profile_[i].is_malloc) continue;
    if (!freed_at.count(i)) {
      slot_at_.push_back(-1);
      continue;
    }
    slots_.push_back({profile_[i].size, buffers[k].size, r.offsets[k]});
    slot_at_.push_back(static_cast<int64_t>(k++));
  }
  if (!told_iteration_begin_) slot_at_.clear();
}

nlohmann::json PlannedPool::report() const {
  nlohmann::json j;
  j["planner"] = planner_->name();
  j["planned"] = !profiling_ && !slots_.empty();
  if (reservation_failed_) j["pool_reservation_failed"] = true;
  j["profiled_mallocs"] = profile_mallocs_;
  j["planned_buffers"] = slots_.size();
  j["unplanned_live_at_boundary"] = persistent_ + crossing_;
  j["crossing_residencies"] = crossing_;           // the iteration's Mallocs still live at its end
  j["setup_blocks_freed_in_iteration"] = setup_freed_;
  j["load_bytes"] = load_;
  j["planned_height_bytes"] = height_;
  j["height_over_load"] = load_ ? static_cast<double>(height_) / static_cast<double>(load_) : 0.0;
  j["proved_optimal"] = proved_optimal_;
  j["search_nodes"] = nodes_;
  arena_.report_into(j, !profiling_, fallbacks_before_plan_);
  return j;
}

namespace {

// The pool's own options: which planner, and the time limit it hands on (the planner's other parameters keep
// their defaults).
struct PlannedPoolOptions {
  std::string planner = "best-fit";
  double time_limit_s = 1.0;

  static const ParamBindings<PlannedPoolOptions>& parameters() {
    using O = PlannedPoolOptions;
    static const auto b = ParamBindings<O>()
        .add("planner", &O::planner, "the offline planner (dlsim list planners)",
             ParamCheck::one_of(planner_registry().names()))
        .add("time_limit_s", &O::time_limit_s, "time limit handed to the planner when it takes one",
             ParamCheck::above_up_to(0, kMaxPlannerTimeLimitS));
    return b;
  }
};

}  // namespace

void register_planned(PoolRegistry& r) {
  r.add({"planned",
         "profiles the first iteration, then serves later ones from an offline placement by any planner "
         "(greedy-by-size, best-fit, optimal) in one reservation",
         PlannedPoolOptions::parameters().specs(), [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           const PlannedPoolOptions o = PlannedPoolOptions::parameters().from_params(p);
           const auto& entry = planner_registry().get(o.planner);
           Params pp(entry.params);
           if (pp.has("time_limit_s")) pp.set("time_limit_s", o.time_limit_s);
           return std::make_unique<PlannedPool>(d, entry.factory(pp));
         }});
}

}  // namespace dlsim
