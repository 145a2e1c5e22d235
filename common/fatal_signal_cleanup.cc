#include "common/fatal_signal_cleanup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace dlsim {

namespace {

constexpr int kSlots = 256;       // more than --jobs children at once
constexpr size_t kPathMax = 1024;  // longer temporary paths are not registered

std::atomic<pid_t> g_groups[kSlots];

// A folder slot: kFree, being written (kBusy: the handler skips it), or kReady.
enum : int { kFree = 0, kBusy = 1, kReady = 2 };
struct DirSlot {
  std::atomic<int> state{kFree};
  char path[kPathMax];
};
DirSlot g_dirs[kSlots];

static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

// Removes the entries of the folder open as `fd` (files, and subfolders when empty), repeating while a pass
// removed something: reading a folder while removing from it may skip entries.
void empty_dir(int fd) {
#ifdef SYS_getdents64
  alignas(8) char buf[4096];
  for (bool removed = true; removed;) {
    removed = false;
    if (lseek(fd, 0, SEEK_SET) < 0) return;
    for (;;) {
      const long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
      if (n <= 0) break;
      for (long at = 0; at < n;) {
        // struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name
        unsigned short reclen;
        std::memcpy(&reclen, buf + at + 16, sizeof reclen);
        const char* name = buf + at + 19;
        at += reclen;
        if (name[0] == '.' && (name[1] == 0 || (name[1] == '.' && name[2] == 0))) continue;
        if (unlinkat(fd, name, 0) == 0 || unlinkat(fd, name, AT_REMOVEDIR) == 0) removed = true;
      }
    }
  }
#else
  (void)fd;  // elsewhere only an empty folder is removed
#endif
}

void remove_dir(const char* path) {
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    empty_dir(fd);
    close(fd);
  }
  rmdir(path);
}

extern "C" void on_fatal_signal(int sig) { die_of_signal_after_cleanup(sig); }

}  // namespace

void install_fatal_signal_cleanup() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    for (int other : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&sa.sa_mask, other);  // one cleanup at a time
    sigaction(sig, &sa, nullptr);
  }
}

void register_child_group(pid_t pgid) {
  install_fatal_signal_cleanup();
  for (auto& slot : g_groups) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pgid)) return;
  }
}

void unregister_child_group(pid_t pgid) {
  for (auto& slot : g_groups) {
    pid_t expected = pgid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void register_temp_dir(const std::string& path) {
  install_fatal_signal_cleanup();
  if (path.size() >= kPathMax) return;
  for (DirSlot& slot : g_dirs) {
    int expected = kFree;
    if (!slot.state.compare_exchange_strong(expected, kBusy)) continue;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.state.store(kReady);
    return;
  }
}

void unregister_temp_dir(const std::string& path) {
  for (DirSlot& slot : g_dirs) {
    int expected = kReady;
    if (!slot.state.compare_exchange_strong(expected, kBusy)) continue;
    const bool same = path == slot.path;
    slot.state.store(same ? kFree : kReady);
    if (same) return;
  }
}

void run_fatal_signal_cleanup() {
  const int saved_errno = errno;
  for (auto& slot : g_groups) {
    const pid_t g = slot.load();
    if (g > 0) kill(-g, SIGKILL);
  }
  for (DirSlot& slot : g_dirs) {
    int expected = kReady;
    if (!slot.state.compare_exchange_strong(expected, kBusy)) continue;  // a folder mid-registration is skipped
    remove_dir(slot.path);
    slot.state.store(kFree);
  }
  errno = saved_errno;
}

void die_of_signal_after_cleanup(int sig) {
  run_fatal_signal_cleanup();
  signal(sig, SIG_DFL);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, sig);
  raise(sig);                                   // pending while the handler blocks it ...
  sigprocmask(SIG_UNBLOCK, &only, nullptr);     // ... delivered here: the default action ends the process
  _exit(128 + sig);                             // not reached
}

}  // namespace dlsim
