// Definitions behind the TSL stub headers, and the few out-of-line members of tsl/framework/allocator.h that the
// BFC allocator needs (written here rather than building allocator.cc, which pulls in TSL's allocator registry).
#include <cstdio>
#include <cstdlib>

#include "tsl/framework/allocator.h"
#include "tsl/platform/env.h"
#include "tsl/platform/logging.h"
#include "tsl/platform/mutex.h"
#include "tsl/platform/numbers.h"
#include "tsl/platform/strcat.h"

namespace tsl {

namespace stub_logging {
uint64_t& logged(Severity s) {
  static uint64_t counts[4] = {0, 0, 0, 0};
  return counts[s];
}

LogMessage::~LogMessage() noexcept(false) {
  ++logged(severity_);
  if (severity_ == FATAL) {
    std::fprintf(stderr, "%s:%d: FATAL: %s\n", file_, line_, text_.str().c_str());
    std::abort();
  }
}
}  // namespace stub_logging

namespace {
uint64_t g_waits = 0;
uint64_t g_wait_micros = 0;
}  // namespace

ConditionResult WaitForMilliseconds(mutex_lock*, condition_variable*, int64_t ms) {
  const uint64_t us = ms > 0 ? static_cast<uint64_t>(ms) * 1000 : 0;
  ++g_waits;
  g_wait_micros += us;
  Env::Default()->AdvanceMicros(us);
  return ConditionResult::kCond_Timeout;
}

namespace stub_runtime {
uint64_t waits_for_memory() { return g_waits; }
uint64_t simulated_wait_micros() { return g_wait_micros; }
}  // namespace stub_runtime

Env* Env::Default() {
  static Env env;
  return &env;
}

absl::Status Env::NewWritableFile(const std::string& name, std::unique_ptr<WritableFile>*) {
  return absl::Status("the dlsim TSL stub writes no files: " + name);
}

namespace strings {
std::string HumanReadableNumBytes(int64_t num_bytes) { return StrCat(num_bytes, " B"); }
}  // namespace strings

std::string AllocatorStats::DebugString() const {
  return strings::StrCat("Limit: ", bytes_limit ? *bytes_limit : 0, " InUse: ", bytes_in_use,
                         " MaxInUse: ", peak_bytes_in_use, " NumAllocs: ", num_allocs);
}

Allocator::~Allocator() = default;

SubAllocator::SubAllocator(const std::vector<Visitor>& alloc_visitors, const std::vector<Visitor>& free_visitors)
    : alloc_visitors_(alloc_visitors), free_visitors_(free_visitors) {}

void SubAllocator::VisitAlloc(void* ptr, int index, size_t num_bytes) {
  for (const auto& v : alloc_visitors_) v(ptr, index, num_bytes);
}

void SubAllocator::VisitFree(void* ptr, int index, size_t num_bytes) {
  for (auto it = free_visitors_.rbegin(); it != free_visitors_.rend(); ++it) (*it)(ptr, index, num_bytes);
}

}  // namespace tsl
