#pragma once
// Stand-in for c10/util/llvmMathExtras.h (upstream replay): the three bit helpers the allocator uses.
#include <bit>
#include <cstdint>
namespace c10::llvm {
inline bool isPowerOf2_64(uint64_t v) { return v && !(v & (v - 1)); }
inline uint64_t PowerOf2Floor(uint64_t v) { return v ? std::bit_floor(v) : 0; }
template <typename T>
unsigned countLeadingZeros(T v) {
  return v ? static_cast<unsigned>(std::countl_zero(static_cast<uint64_t>(v))) - (64 - 8 * sizeof(T)) : 8 * sizeof(T);
}
}  // namespace c10::llvm
