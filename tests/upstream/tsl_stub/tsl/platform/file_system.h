#pragma once
// Stub of TSL's WritableFile, for bfc_allocator.cc's optional memory-map dump.
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tsl {
class WritableFile {
 public:
  virtual ~WritableFile() = default;
  virtual absl::Status Append(absl::string_view data) = 0;
};
}  // namespace tsl
