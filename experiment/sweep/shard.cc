#include "experiment/sweep/shard.h"

#include <charconv>
#include <filesystem>

#include "common/config_error.h"

namespace dlsim {

std::string Shard::folder() const { return "shard-" + std::to_string(index) + "-of-" + std::to_string(count); }

namespace {

bool number(const std::string& s, size_t& v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

Shard parse_shard(const std::string& text) {
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

std::optional<Shard> shard_of_folder(const std::string& dir) {
  std::filesystem::path p(dir);
  if (!p.has_filename()) p = p.parent_path();  // "shard-2-of-8/"
  const std::string name = p.filename().string();
  const std::string prefix = "shard-", middle = "-of-";
  const size_t of = name.find(middle);
  Shard s;
  if (name.rfind(prefix, 0) != 0 || of == std::string::npos ||
      !number(name.substr(prefix.size(), of - prefix.size()), s.index) ||
      !number(name.substr(of + middle.size()), s.count) || s.count < 1 || s.index < 1 || s.index > s.count)
    return std::nullopt;
  return s;
}

}  // namespace dlsim
