#pragma once
// Stub of TSL's logging: LOG(INFO/WARNING/ERROR) messages are counted and dropped (the replay would otherwise print
// TF's out-of-memory dumps thousands of times); LOG(FATAL) and a failed CHECK print and abort, as in TSL. VLOG is
// off. DCHECKs are checked, as in a debug build.
#include <cstdint>
#include <sstream>

namespace tsl::stub_logging {
enum Severity { INFO = 0, WARNING = 1, ERROR = 2, FATAL = 3 };

// Messages logged so far, by severity (the replay reports warnings: TF's garbage-collection notice is one).
uint64_t& logged(Severity s);

class LogMessage {
 public:
  LogMessage(const char* file, int line, Severity s) : file_(file), line_(line), severity_(s) {}
  ~LogMessage() noexcept(false);
  std::ostream& stream() { return text_; }

 private:
  const char* file_;
  int line_;
  Severity severity_;
  std::ostringstream text_;
};
}  // namespace tsl::stub_logging

#define LOG(severity) ::tsl::stub_logging::LogMessage(__FILE__, __LINE__, ::tsl::stub_logging::severity).stream()
#define VLOG_IS_ON(level) false
#define VLOG(level) \
  while (false) LOG(INFO)
#define CHECK(condition) \
  while (!(condition)) LOG(FATAL) << "Check failed: " #condition " "
#define CHECK_EQ(a, b) CHECK((a) == (b))
#define CHECK_NE(a, b) CHECK((a) != (b))
#define CHECK_LT(a, b) CHECK((a) < (b))
#define CHECK_LE(a, b) CHECK((a) <= (b))
#define CHECK_GT(a, b) CHECK((a) > (b))
#define CHECK_GE(a, b) CHECK((a) >= (b))
#define DCHECK(condition) CHECK(condition)
#define DCHECK_EQ(a, b) CHECK_EQ(a, b)
#define DCHECK_NE(a, b) CHECK_NE(a, b)
#define DCHECK_LT(a, b) CHECK_LT(a, b)
#define DCHECK_LE(a, b) CHECK_LE(a, b)
#define DCHECK_GT(a, b) CHECK_GT(a, b)
#define DCHECK_GE(a, b) CHECK_GE(a, b)
