#include "common/temp_dir.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/fatal_signal_cleanup.h"

namespace dlsim {

TempDir::TempDir(const std::string& prefix) {
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::temp_directory_path(ec);
  std::string tmpl = ((ec ? std::filesystem::path("/tmp") : base) / (prefix + "-" + std::to_string(getpid()) + "-XXXXXX")).string();
  if (!mkdtemp(tmpl.data()))
    throw std::runtime_error("cannot make a temporary folder '" + tmpl + "': " + std::strerror(errno));
  path_ = tmpl;
  register_temp_dir(path_.string());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  unregister_temp_dir(path_.string());  // after: a signal in between still finds it
}

}  // namespace dlsim
