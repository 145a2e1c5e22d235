#pragma once
// Stub of absl::Status, only as far as bfc_allocator.cc's memory-map dump (TF_BFC_MEMORY_DUMP) uses it; the stub
// Env refuses to open files, so a dump is never written.
#include <ostream>
#include <string>

namespace absl {
class Status {
 public:
  Status() = default;
  explicit Status(std::string message) : message_(std::move(message)), ok_(false) {}
  bool ok() const { return ok_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;
  bool ok_ = true;
};
inline std::ostream& operator<<(std::ostream& os, const Status& s) { return os << (s.ok() ? "OK" : s.message()); }
}  // namespace absl
