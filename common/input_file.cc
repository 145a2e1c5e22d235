#include "common/input_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/config_error.h"

namespace dlsim {

std::string read_input_file(const std::string& path, const std::string& key) {
  if (path.empty()) throw ConfigError("<command line>", 0, key, "an empty file name");
  std::error_code ec;
  // std::ifstream opens a folder without complaint and then reads nothing: refuse it first.
  if (std::filesystem::is_directory(path, ec)) throw ConfigError(path, 0, key, "is a folder, not a file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, 0, key, std::string("cannot open: ") + (errno ? std::strerror(errno) : "unknown reason"));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path, 0, key, std::string("cannot read: ") + std::strerror(errno));
  return text.str();
}

}  // namespace dlsim
