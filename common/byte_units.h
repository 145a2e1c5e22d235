#pragma once
// Binary byte units, declared once for the whole project (tests and models alike), so that no file keeps its own
// copy: two copies in files of one library collide when CI compiles the library as one translation unit.
#include <cstdint>

namespace dlsim {

inline constexpr uint64_t kKiB = uint64_t{1} << 10;
inline constexpr uint64_t kMiB = uint64_t{1} << 20;
inline constexpr uint64_t kGiB = uint64_t{1} << 30;

}  // namespace dlsim
