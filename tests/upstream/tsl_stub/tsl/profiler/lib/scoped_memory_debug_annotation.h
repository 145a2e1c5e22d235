#pragma once
// Stub of TSL's memory debug annotation: no op is running in a replay, so the annotation is always empty.
#include <cstdint>
#include <functional>
#include <string>

namespace tsl::profiler {
struct MemoryDebugAnnotation {
  const char* pending_op_name = nullptr;
  int64_t pending_step_id = 0;
  const char* pending_region_type = nullptr;
  int32_t pending_data_type = 0;
  std::function<std::string()> pending_shape_func = []() { return std::string(); };
};

class ScopedMemoryDebugAnnotation {
 public:
  static const MemoryDebugAnnotation& CurrentAnnotation() {
    static const MemoryDebugAnnotation empty;
    return empty;
  }
};
}  // namespace tsl::profiler
