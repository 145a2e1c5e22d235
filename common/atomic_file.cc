#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/config_error.h"

namespace dlsim {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& key, const std::string& what, int err) {
  throw ConfigError(path, 0, key, what + ": " + std::strerror(err));
}

// The file a write to `path` must replace: `path` itself, or where a chain of symbolic links leads.
fs::path target_of(const fs::path& path) {
  std::error_code ec;
  fs::path p = path;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    const fs::path next = fs::read_symlink(p, ec);
    if (ec) break;
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  return p;
}

// A name beside `target` that no other writer (another thread, process or host) picks: the process id and a
// counter. The target's own name is shortened so that a name near the file system's limit still gets a
// temporary one (the final rename then reports a name that is too long, naming the user's path).
fs::path temp_beside(const fs::path& target, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  std::string base = target.filename().string().substr(0, 160);
  return target.parent_path() / ("." + base + ".tmp-" + std::to_string(::getpid()) + "-" +
                                 std::to_string(counter.fetch_add(1)) + "-" + std::to_string(attempt));
}

}  // namespace

bool write_fully(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

void write_file_atomically(const std::string& path, std::string_view text, const std::string& key) {
  if (path.empty()) throw ConfigError("<command line>", 0, key, "an empty file name");
  const fs::path target = target_of(path);
  // A folder named as the file would otherwise be replaced by nothing (rename refuses) only after the work:
  // say so in the words the user knows.
  std::error_code ec;
  if (fs::is_directory(target, ec)) throw ConfigError(path, 0, key, "is a folder, not a file name to write");
  fs::path temp;
  int fd = -1;
  for (unsigned attempt = 0; fd < 0; ++attempt) {
    temp = temp_beside(target, attempt);
    // 0666 less the umask, as a file the shell would create.
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && (errno != EEXIST || attempt >= 100)) fail(path, key, "cannot write", errno);
  }
  int err = 0;
  if (!write_fully(fd, text)) err = errno;
  else if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;  // EINVAL: a file system without fsync
  if (::close(fd) != 0 && err == 0) err = errno;  // NFS reports a full disk at close
  if (err == 0) {
    struct stat st{};
    if (::stat(target.c_str(), &st) == 0) ::chmod(temp.c_str(), st.st_mode & 07777);  // keep the old file's mode
    if (std::rename(temp.c_str(), target.c_str()) != 0) err = errno;
  }
  if (err != 0) {
    ::unlink(temp.c_str());
    fail(path, key, "cannot write", err);
  }
}

}  // namespace dlsim
