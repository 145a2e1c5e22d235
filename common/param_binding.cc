#include "common/param_binding.h"

#include <cmath>
#include <limits>

namespace dlsim {

namespace {
constexpr uint64_t kBytesPerMiB = uint64_t{1} << 20;
}  // namespace

// The checks of *_mb parameters stop at kMaxMebibytes, so the product cannot wrap.
ParamConversion<uint64_t, int64_t> mebibytes() {
  return {[](const int64_t& mb) { return static_cast<uint64_t>(mb) * kBytesPerMiB; },
          [](const uint64_t& bytes) { return static_cast<int64_t>(bytes / kBytesPerMiB); }};
}

ParamConversion<uint64_t, int64_t> mebibytes_zero_unlimited() {
  constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();
  return {[](const int64_t& mb) { return mb == 0 ? kUnlimited : static_cast<uint64_t>(mb) * kBytesPerMiB; },
          [](const uint64_t& bytes) { return bytes == kUnlimited ? int64_t{0} : static_cast<int64_t>(bytes / kBytesPerMiB); }};
}

ParamConversion<int64_t, double> microseconds_to_ns() {
  return {[](const double& us) { return static_cast<int64_t>(std::llround(us * 1000.0)); },
          [](const int64_t& ns) { return static_cast<double>(ns) / 1000.0; }};
}

ParamConversion<double, int64_t> integer_as_double() {
  return {[](const int64_t& v) { return static_cast<double>(v); },
          [](const double& v) { return static_cast<int64_t>(v); }};
}

}  // namespace dlsim
