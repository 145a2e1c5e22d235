#include "common/config_error.h"

namespace dlsim {
namespace {
std::string format_where(const std::string& file, int line, const std::string& key, const std::string& msg) {
  std::string s = file.empty() ? std::string("<input>") : file;
  if (line > 0) s += ":" + std::to_string(line);
  s += ": ";
  if (!key.empty()) s += "'" + key + "': ";
  return s + msg;
}
}  // namespace

ConfigError::ConfigError(std::string file, int line, std::string key, const std::string& message)
    : std::runtime_error(format_where(file, line, key, message)),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      message_(message) {}

}  // namespace dlsim
