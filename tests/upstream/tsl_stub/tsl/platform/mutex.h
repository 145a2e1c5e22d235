#pragma once
// Stub of TSL's mutex and condition variable. The replay is single-threaded, so a wait for memory that another
// thread would free can only time out: WaitForMilliseconds advances the stub Env's clock by the timeout instead of
// sleeping (tsl/platform/env.h), and counts the wait.
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace tsl {
class mutex {
 public:
  void lock() { m_.lock(); }
  void unlock() { m_.unlock(); }

 private:
  std::mutex m_;
};

class mutex_lock {
 public:
  explicit mutex_lock(mutex& m) : m_(m) { m_.lock(); }
  ~mutex_lock() { m_.unlock(); }
  mutex_lock(const mutex_lock&) = delete;
  mutex_lock& operator=(const mutex_lock&) = delete;

 private:
  mutex& m_;
};

class condition_variable {
 public:
  void notify_one() { ++notifications_; }
  void notify_all() { ++notifications_; }
  uint64_t notifications() const { return notifications_; }

 private:
  uint64_t notifications_ = 0;
};

enum class ConditionResult { kCond_Timeout, kCond_MaybeNotified };

// Returns kCond_Timeout after moving the stub clock `ms` milliseconds on: nothing can notify a single thread.
ConditionResult WaitForMilliseconds(mutex_lock* lock, condition_variable* cv, int64_t ms);

namespace stub_runtime {
uint64_t waits_for_memory();     // WaitForMilliseconds calls so far
uint64_t simulated_wait_micros();  // the clock time they took
}  // namespace stub_runtime
}  // namespace tsl
