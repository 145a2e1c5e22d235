#pragma once
// Stub of TSL's SharedCounter (the timestamp source of stream-ordered reuse). The GPU BFC allocator that dlsim
// models has no timing counter set, so the replay never creates one; the class is here for the header.
#include <atomic>
#include <cstdint>

namespace tsl {
class SharedCounter {
 public:
  int64_t get() { return value_; }
  int64_t next() { return ++value_; }

 private:
  std::atomic<int64_t> value_{0};
};
}  // namespace tsl
