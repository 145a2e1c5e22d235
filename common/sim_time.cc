#include "common/sim_time.h"

#include <cmath>
#include <sstream>

#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

int64_t checked_duration_ns(double ns, const std::string& file, const std::string& key, const std::string& what) {
  if (std::isnan(ns) || ns < 0)
    throw ConfigError(file, 0, key, what + " has no valid duration (" + significant(ns) + " ns) under this value");
  if (ns > static_cast<double>(kMaxDurationNs))
    throw ConfigError(file, 0, key,
                      what + " would take " + significant(ns / 1e9) +
                          " s, above dlsim's limit of 1e15 ns (about 11.6 days) for one kernel, copy or host call: the "
                          "value is too extreme to simulate");
  return static_cast<int64_t>(std::llround(ns));
}

int64_t add_time(int64_t now, int64_t d, const std::string& file) {
  int64_t sum = 0;
  if (d < 0 || __builtin_add_overflow(now, d, &sum) || sum > kMaxSimTimeNs)
    throw ConfigError(file, 0, "",
                      "the simulated clock would pass 2^62 ns (about 146 years) at " + std::to_string(now) + " ns + " +
                          std::to_string(d) + " ns: the hardware's times or rates are too extreme to simulate this run");
  return sum;
}

}  // namespace dlsim
