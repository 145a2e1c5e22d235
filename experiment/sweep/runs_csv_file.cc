#include "experiment/sweep/runs_csv_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/config_error.h"

namespace dlsim {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ConfigError(path, 0, "", what + ": " + std::strerror(errno));
}

// Writes all of `text`; a short write (a signal, a full disk) goes on from where it stopped.
void write_fully(int fd, const std::string& text, const std::string& path) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "cannot write");
    }
    done += static_cast<size_t>(n);
  }
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
  write_fully(fd_, text, path_);
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp";
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(temp, "cannot create");
  try {
    write_fully(fd, text, temp);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail(temp, "cannot sync");
  }
  ::close(fd);
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail(path, "cannot replace with " + temp);
}

}  // namespace dlsim
