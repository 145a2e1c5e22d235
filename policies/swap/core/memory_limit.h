#pragma once
// The memory limit of a swap policy that aims at one, taken the same way by every such policy: `limit_mb`
// (MiB of live tensor bytes) when set, else `limit_fraction` of the no-swap peak of live bytes when set, else
// the device's capacity (the plan then only has to make the iteration fit on the GPU).
#include <cstdint>
#include <vector>

#include "common/param_binding.h"

namespace dlsim {

struct MemoryLimit {
  double fraction = 0;  // 0: not set
  uint64_t bytes = 0;   // 0: not set

  static const ParamBindings<MemoryLimit>& parameters();  // limit_fraction, limit_mb
  // The limit in bytes; never 0 (a set fraction that rounds below one byte gives 1: a limit no run meets).
  uint64_t resolve(uint64_t no_swap_peak_bytes, uint64_t device_capacity) const;
};

}  // namespace dlsim
