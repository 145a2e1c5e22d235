#include "policies/swap/core/memory_limit.h"

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
  if (fraction > 0) return static_cast<uint64_t>(std::floor(fraction * static_cast<double>(no_swap_peak_bytes)));
  return device_capacity;
}

}  // namespace dlsim
