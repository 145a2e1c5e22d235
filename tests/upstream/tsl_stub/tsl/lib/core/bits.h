#pragma once
// Stub of tsl/lib/core/bits.h: floor(log2(n)), -1 for 0, as TSL defines it.
#include <bit>
#include <cstdint>

namespace tsl {
inline int Log2Floor64(uint64_t n) { return n == 0 ? -1 : static_cast<int>(std::bit_width(n)) - 1; }
}  // namespace tsl
