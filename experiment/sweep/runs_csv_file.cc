#include "experiment/sweep/runs_csv_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/atomic_file.h"
#include "common/config_error.h"

namespace dlsim {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ConfigError(path, 0, "", what + ": " + std::strerror(errno));
}

}  // namespace

RunsCsvFile RunsCsvFile::create(const std::string& path, const std::string& header) {
  // The header goes in by rename: a kill at any moment leaves the old file, or one with a complete header that
  // --resume accepts, never an empty or half-written one that it would have to refuse.
  write_file_atomically(path, header + "\n");
  return append_to(path, header.size() + 1);
}

RunsCsvFile RunsCsvFile::append_to(const std::string& path, uint64_t keep_bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open for appending");
  RunsCsvFile f(path, fd);
  if (::ftruncate(fd, static_cast<off_t>(keep_bytes)) != 0) fail(path, "cannot cut the torn last line");
  return f;
}

RunsCsvFile::RunsCsvFile(RunsCsvFile&& other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

RunsCsvFile::~RunsCsvFile() {
  if (fd_ >= 0) ::close(fd_);
}

void RunsCsvFile::append(const std::string& line) {
  std::string text = line;
  text += '\n';
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!write_fully(fd_, text)) fail(path_, "cannot write");
}

}  // namespace dlsim
