#pragma once
// Stub of TSL's TraceMe: the profiler is off, so instant activities are never encoded (the callback is not run).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tsl::profiler {
enum class TraceMeLevel { kCritical = 1, kInfo = 2, kVerbose = 3 };

struct TraceMeArg {
  template <class Value>
  TraceMeArg(std::string_view k, const Value&) : key(k) {}
  std::string_view key;
};
inline std::string TraceMeEncode(std::string_view name, std::initializer_list<TraceMeArg>) {
  return std::string(name);
}

class TraceMe {
 public:
  template <class NameGenerator>
  static void InstantActivity(NameGenerator&&, TraceMeLevel = TraceMeLevel::kCritical) {}
};
}  // namespace tsl::profiler
