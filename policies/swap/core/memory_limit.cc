#include "policies/swap/core/memory_limit.h"

#include <algorithm>
#include <cmath>

namespace dlsim {

const ParamBindings<MemoryLimit>& MemoryLimit::parameters() {
  static const auto b = ParamBindings<MemoryLimit>()
      .add("limit_fraction", &MemoryLimit::fraction,
           "memory limit as a fraction of the no-swap peak of live bytes (0: not set)", ParamCheck::in_range(0, 1))
      .add("limit_mb", &MemoryLimit::bytes, mebibytes(),
           "memory limit in MiB of live bytes; wins over limit_fraction (0: not set; neither set: the device capacity)",
           ParamCheck::in_range(0, kMaxMebibytes));
  return b;
}

uint64_t MemoryLimit::resolve(uint64_t no_swap_peak_bytes, uint64_t device_capacity) const {
  if (bytes > 0) return bytes;
  // At least one byte: 0 means "no target" to the run's figures (swap_limit_met), so a fraction small enough to
  // round to nothing would read as a limit met; one byte is a limit no run meets, and says so.
  if (fraction > 0)
    return std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(fraction * static_cast<double>(no_swap_peak_bytes))));
  return device_capacity;
}

}  // namespace dlsim
