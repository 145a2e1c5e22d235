#pragma once
// Simulated time is an int64 count of nanoseconds (deterministic, exact). Two bounds keep every sum of times from
// wrapping, whatever a hardware file says:
// - a single duration a model computes (a kernel, a copy, a host call, a latency) is at most kMaxDurationNs,
//   1e15 ns (about 11.6 days): hardware files accept times up to 1e12 us, and a duration derived from rates
//   (bytes over a tiny bandwidth) beyond it is a ConfigError naming the hardware key that made it;
// - the simulated clock never passes kMaxSimTimeNs, 2^62 ns (about 146 years): the engine adds durations with
//   add_time, which throws a run-level ConfigError instead of wrapping into a negative time.
// Both are far beyond any real run, and 2^62 + 1e15 still fits in an int64.
#include <cstdint>
#include <string>

namespace dlsim {

inline constexpr int64_t kMaxDurationNs = 1'000'000'000'000'000;  // 1e15 ns
inline constexpr double kMaxDurationUs = 1e12;                    // the same in the hardware files' unit
inline constexpr int64_t kMaxSimTimeNs = int64_t{1} << 62;

// `ns` (a double from rates and sizes) rounded to integer nanoseconds. Throws ConfigError(file, 0, key, ...) when
// it is not a number or above kMaxDurationNs; `what` names the duration ("kernel 'conv1'", "copy of 4 GiB").
int64_t checked_duration_ns(double ns, const std::string& file, const std::string& key, const std::string& what);

// now + d for a simulated clock: throws ConfigError(file, 0, "", ...) when the sum would pass kMaxSimTimeNs
// (or d is negative); `file` is the hardware file whose times made the run that long.
int64_t add_time(int64_t now, int64_t d, const std::string& file);

}  // namespace dlsim
