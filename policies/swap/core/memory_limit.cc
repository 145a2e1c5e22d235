#include "policies/swap/core/memory_limit.h"

#include <cmath>

namespace dlsim {

std::vector<ParamSpec> MemoryLimit::specs() {
  return {
      {"limit_fraction", ParamType::Double, 0.0,
       "memory limit as a fraction of the no-swap peak of live bytes (0: not set)", ParamCheck::in_range(0, 1)},
      {"limit_mb", ParamType::Int, int64_t{0},
       "memory limit in MiB of live bytes; wins over limit_fraction (0: not set; neither set: the device capacity)",
       ParamCheck::in_range(0, kMaxMebibytes)},
  };
}

MemoryLimit MemoryLimit::from_params(const Params& p) {
  MemoryLimit m;
  m.fraction = p.get_double("limit_fraction");
  m.bytes = static_cast<uint64_t>(p.get_int("limit_mb")) << 20;
  return m;
}

uint64_t MemoryLimit::resolve(uint64_t no_swap_peak_bytes, uint64_t device_capacity) const {
  if (bytes > 0) return bytes;
  if (fraction > 0) return static_cast<uint64_t>(std::floor(fraction * static_cast<double>(no_swap_peak_bytes)));
  return device_capacity;
}

}  // namespace dlsim
