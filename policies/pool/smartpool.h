#pragma once
// `smartpool`: the lifetime-aware pool of Zhang et al. (SINGA SmartMemPool; notes singa-memory-management.md
// sections 2, 3, 8, 9), which learns the iteration without being told (it ignores iteration_end()).
// - Warm-up: every request is a cudaMalloc/cudaFree and is appended to a trace (sizes and pointers only).
// - Detection at op indices 299, 599, 1199, 2399, ... (a checkpoint of 300 doubling after each test), see
//   smartpool_pattern.h; once accepted (length L > 100), its start moves to the rotation with the fewest bytes
//   live (quietest_phase: the iteration boundary, where SINGA keeps the first repeat's phase), and the pool
//   switches at the next boundary `now + L - (now - start) mod L`.
// - Planning at the switch (smartpool_plan.h): offsets for one iteration, one cudaMalloc for the whole pool.
// - Afterwards, the Malloc at position k = (index - start) mod L of the iteration gets its planned slot if the
//   size matches and the slot's bytes are free; a cross-iteration block whose slot is busy gets its backup
//   copy; anything else falls back to cudaMalloc (counted). Blocks allocated before the switch (parameters,
//   optimizer state) keep their cudaMalloc memory, as in the reference.
// Ops (Malloc and Free) are counted jointly, as in the pool-only reference.
#include <vector>

#include "common/param_binding.h"
#include "policies/pool/planned_arena.h"
#include "policies/pool/smartpool_plan.h"

namespace dlsim {

// The pool's options in its own units, each default written here once; parameters() binds the parameters to
// them (common/param_binding.h).
struct SmartPoolOptions {
  PatternParams pattern;
  size_t first_check = 300;  // ops before the first detection test; doubles after each test
  ColorMethod color = ColorMethod::BestFit;

  static const ParamBindings<SmartPoolOptions>& parameters();
  bool operator==(const SmartPoolOptions&) const = default;
};

class SmartPool : public PoolPolicy {
 public:
  SmartPool(DeviceMemory& device, SmartPoolOptions options);

  std::string name() const override { return "smartpool"; }
  std::optional<DevPtr> allocate(const AllocRequest& req) override;
  void deallocate(DevPtr p) override;
  const PoolStats& stats() const override { return arena_.stats(); }
  nlohmann::json report() const override;
  bool holds_frees_for_other_streams() const override { return false; }  // a planned offset is reused, not held

  bool planned() const { return switched_; }

 private:
  void after_op();  // advances the op index and runs detection on its schedule

  SmartPoolOptions opt_;
  PlannedArena arena_;
  std::vector<TraceOp> trace_;  // kept until the switch
  uint64_t index_ = 0;          // index of the next op
  uint64_t next_check_;
  uint64_t tests_ = 0;
  bool detected_ = false;
  uint64_t detected_at_ = 0;    // op index of the successful test
  uint64_t detected_start_ = 0; // where the first repeat started, before quietest_phase moved it
  Repeat iteration_;
  uint64_t switch_at_ = 0;
  bool switched_ = false;
  bool reservation_failed_ = false;
  SmartPlan plan_;
  uint64_t fallbacks_before_switch_ = 0;
};

void register_smartpool(PoolRegistry& r);

}  // namespace dlsim
