#include "policies/pool/smartpool.h"

#include <stdexcept>

namespace dlsim {

SmartPool::SmartPool(DeviceMemory& device, SmartPoolOptions options)
    : opt_(options), arena_(device), next_check_(options.first_check) {
  if (opt_.first_check == 0) throw std::invalid_argument("smartpool: first_check must be positive");
}

std::optional<DevPtr> SmartPool::allocate(const AllocRequest& req) {
  if (detected_ && !switched_ && index_ >= switch_at_) {
    switched_ = true;
    plan_ = plan_smartpool(trace_, iteration_, opt_.color);
    if (!arena_.reserve(plan_.pool_bytes)) reservation_failed_ = true;
    fallbacks_before_switch_ = arena_.fallbacks();
    trace_.clear();
    trace_.shrink_to_fit();
  }
  std::optional<DevPtr> p;
  if (switched_) {
    const uint64_t k = (index_ - iteration_.start) % iteration_.length;
    const int s = plan_.slot_at[k];
    if (s >= 0 && plan_.slots[s].size == req.bytes) {
      const SmartSlot& slot = plan_.slots[s];
      p = arena_.take_slot(slot.offset, slot.extent, req.bytes);
      if (!p && slot.cross_iteration) p = arena_.take_slot(slot.offset + plan_.cross_region, slot.extent, req.bytes);
    }
    if (!p) p = arena_.fallback(req.bytes);
  } else {
    p = arena_.fallback(req.bytes);
    if (p) trace_.push_back({true, *p, req.bytes});
  }
  if (!p) return std::nullopt;  // out of memory: not an op of the program's trace
  after_op();
  return p;
}

void SmartPool::deallocate(DevPtr p) {
  arena_.release(p);
  if (!switched_) trace_.push_back({false, p, 0});
  after_op();
}

void SmartPool::after_op() {
  ++index_;
  if (detected_ || index_ != next_check_) return;
  // The op just recorded has index next_check_ - 1 (299, 599, 1199, ...).
  ++tests_;
  next_check_ *= 2;
  const Repeat r = detect_iteration(trace_, opt_.pattern);
  if (r.length == 0) return;
  detected_ = true;
  detected_at_ = index_ - 1;
  detected_start_ = r.start;
  iteration_ = r;
  iteration_.start = quietest_phase(trace_, r);
  const uint64_t now = index_ - 1;
  switch_at_ = now + r.length - (now - iteration_.start) % r.length;
}

nlohmann::json SmartPool::report() const {
  nlohmann::json j;
  j["pattern_found"] = detected_;
  j["detection_tests"] = tests_;
  if (detected_) {
    j["pattern_found_at_op"] = detected_at_;
    j["iteration_length"] = iteration_.length;
    j["iteration_start_op"] = iteration_.start;
    j["first_repeat_start_op"] = detected_start_;
    j["switch_at_op"] = switch_at_;
  }
  j["planned"] = switched_ && !reservation_failed_;
  if (reservation_failed_) j["pool_reservation_failed"] = true;
  j["planned_blocks"] = plan_.slots.size();
  j["cross_iteration_region_bytes"] = plan_.cross_region;
  arena_.report_into(j, switched_, fallbacks_before_switch_);
  return j;
}

const ParamBindings<SmartPoolOptions>& SmartPoolOptions::parameters() {
  using O = SmartPoolOptions;
  static const auto b = ParamBindings<O>()
      .add("min_iteration_length", [](auto& o) -> auto& { return o.pattern.min_length; },
           "accept a pattern longer than this many ops", ParamCheck::at_least(1))
      .add("verify_length", [](auto& o) -> auto& { return o.pattern.verify_length; },
           "a sub-pattern longer than this replaces the found one", ParamCheck::at_least(1))
      .add("first_check", &O::first_check, "ops before the first detection test (then doubling)",
           ParamCheck::at_least(1))
      .add_choice("color_method", &O::color,
                  ParamChoices<ColorMethod>{{"BF", ColorMethod::BestFit}, {"FF", ColorMethod::FirstFit}},
                  "BF (best fit, default) or FF (first fit)");
  return b;
}

void register_smartpool(PoolRegistry& r) {
  r.add({"smartpool",
         "SINGA SmartPool (Zhang et al. 2019): detects the iteration from the malloc/free trace, plans offsets "
         "for one iteration (size-descending best fit among overlapping lifetimes) in one reservation",
         SmartPoolOptions::parameters().specs(), [](const Params& p, DeviceMemory& d) -> std::unique_ptr<PoolPolicy> {
           return std::make_unique<SmartPool>(d, SmartPoolOptions::parameters().from_params(p));
         }});
}

}  // namespace dlsim
