#pragma once
// Stub of tsl/platform/numbers.h: byte counts for log messages (which the stub logging drops).
#include <cstdint>
#include <string>

namespace tsl::strings {
std::string HumanReadableNumBytes(int64_t num_bytes);
}  // namespace tsl::strings
