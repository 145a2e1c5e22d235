#pragma once
// SmartPool's offsets for one detected iteration, as SINGA's SmartMemPool computes them (notes 3.2):
// - blocks of the window [start, start + L): a Malloc paired with the next Free of its pointer; when that Free
//   lies past the window the block is "cross-iteration", live until the window's end;
// - each group sorted by size descending, ties by arrival; cross-iteration blocks coloured first from 0, a
//   second copy of their region reserved above them (the "backup": a cross-iteration block of one iteration
//   is still live when the next iteration allocates it again), then the normal blocks above both;
// - a block goes in the smallest hole between the merged address ranges of already coloured blocks whose
//   lifetimes overlap it (best fit, "BF"), else right after the last range; or in the first hole from the floor
//   ("FF"). Quirk kept from the reference: with two or more ranges, BF ignores the hole below the first one.
//   Quirk not kept: the reference could put a normal block below its floor (inside the backup region) when its
//   only conflicting block is cross-iteration; here nothing goes below the floor.
#include <cstdint>
#include <vector>

#include "policies/pool/smartpool_pattern.h"

namespace dlsim {

struct SmartSlot {
  uint64_t size = 0;     // as requested (0 allowed)
  uint64_t extent = 0;   // bytes reserved: max(size, 1), so that every block has its own address
  uint64_t offset = 0;
  bool cross_iteration = false;
};

struct SmartPlan {
  std::vector<int> slot_at;        // per position in the iteration: index into slots, or -1 (a Free / no block)
  std::vector<SmartSlot> slots;
  uint64_t cross_region = 0;       // top of the cross-iteration blocks; their backups sit this much higher
  uint64_t pool_bytes = 0;
};

enum class ColorMethod { BestFit, FirstFit };

SmartPlan plan_smartpool(const std::vector<TraceOp>& ops, const Repeat& iteration, ColorMethod method);

}  // namespace dlsim
