#pragma once
// A private folder under the system's temporary directory, for files a child process reads or writes (the CBC
// model and solution, a memory snapshot for the Python figure): removed with what is in it when the TempDir goes,
// and by the fatal-signal cleanup when a signal ends dlsim first (fatal_signal_cleanup.h). Named
// <prefix>-<dlsim's pid>-XXXXXX, so that one a SIGKILL left behind names the run.
#include <filesystem>
#include <stdexcept>
#include <string>

namespace dlsim {

class TempDir {
 public:
  // Throws std::runtime_error naming the folder when it cannot be made.
  explicit TempDir(const std::string& prefix);
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace dlsim
