#pragma once
// Stub of TSL's Env: a clock that only WaitForMilliseconds moves (tsl/platform/mutex.h), and no file system.
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "tsl/platform/file_system.h"
#include "tsl/platform/mutex.h"

namespace tsl {
class Env {
 public:
  static Env* Default();
  uint64_t NowMicros() const { return now_micros_; }
  void AdvanceMicros(uint64_t us) { now_micros_ += us; }
  absl::Status NewWritableFile(const std::string& name, std::unique_ptr<WritableFile>* file);

 private:
  uint64_t now_micros_ = 0;
};
}  // namespace tsl
