#pragma once
// Stub of tsl/platform/types.h: the integer and string names TSL code uses unqualified, and the standard headers
// that TSL's real platform headers bring in along the way (bfc_allocator.h and allocator_retry.h rely on them).
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tsl {
using std::string;
typedef int8_t int8;
typedef int16_t int16;
typedef int32_t int32;
typedef int64_t int64;
typedef uint8_t uint8;
typedef uint16_t uint16;
typedef uint32_t uint32;
typedef uint64_t uint64;
}  // namespace tsl
