#include "experiment/sweep/shard.h"

#include <charconv>

#include "common/config_error.h"

namespace dlsim {

std::string Shard::folder() const { return "shard-" + std::to_string(index) + "-of-" + std::to_string(count); }

Shard parse_shard(const std::string& text) {
  auto number = [](const std::string& s, size_t& v) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  const size_t slash = text.find('/');
  Shard s;
  if (slash == std::string::npos || !number(text.substr(0, slash), s.index) || !number(text.substr(slash + 1), s.count))
    throw ConfigError("<command line>", 0, "--shard", "expected I/N (shard I of N, e.g. 2/8), got '" + text + "'");
  if (s.count < 1 || s.index < 1 || s.index > s.count)
    throw ConfigError("<command line>", 0, "--shard",
                      "shard " + std::to_string(s.index) + " of " + std::to_string(s.count) +
                          " does not exist: I must be between 1 and N (" + text + ")");
  return s;
}

}  // namespace dlsim
