#include "common/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "common/fatal_signal_cleanup.h"

extern char** environ;

namespace dlsim {

std::string find_program(const std::string& program) {
  if (program.find('/') != std::string::npos) return access(program.c_str(), X_OK) == 0 ? program : "";
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string d; std::getline(dirs, d, ':');) {
    if (d.empty()) continue;
    const std::string p = d + "/" + program;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv_in, const std::string& output_file) {
  if (argv_in.empty()) throw ChildStartError("no program to run");
  const std::string path = find_program(argv_in[0]);
  if (path.empty()) throw ChildStartError("'" + argv_in[0] + "' not found or not executable");
  std::vector<std::string> args = argv_in;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // The child reports a failed exec through this pipe (closed on a successful exec).
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw ChildStartError(std::string("pipe: ") + std::strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int e = errno;
    close(report[0]);
    close(report[1]);
    throw ChildStartError(std::string("fork: ") + std::strerror(e));
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // dlsim ended before the death signal was set
#endif
    int e = 0;
    if (!output_file.empty()) {
      const int fd = open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(STDOUT_FILENO, STDERR_FILENO) < 0) e = errno;
    }
    if (e == 0) {
      execve(path.c_str(), argv.data(), environ);
      e = errno;
    }
    ssize_t ignored = write(report[1], &e, sizeof e);
    (void)ignored;
    _exit(127);
  }
  (void)parent;
  pid_ = pid;
  setpgid(pid, pid);  // also from here, so that the group exists before anyone signals it
  register_child_group(pid);
  close(report[1]);
  int child_errno = 0;
  ssize_t n;
  do n = read(report[0], &child_errno, sizeof child_errno);
  while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    wait();
    throw ChildStartError("cannot run '" + path + "': " + std::strerror(child_errno));
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    kill();
    wait();
  }
}

void ChildProcess::reaped(int status) {
  status_ = status;
  unregister_child_group(pid_);
}

std::optional<int> ChildProcess::try_wait() {
  if (status_) return status_;
  int status = 0;
  pid_t w;
  do w = waitpid(pid_, &status, WNOHANG);
  while (w < 0 && errno == EINTR);
  if (w == pid_) reaped(status);
  else if (w < 0) reaped(0);  // not our child any more (reaped elsewhere): nothing to wait for
  return status_;
}

int ChildProcess::wait() {
  if (status_) return *status_;
  int status = 0;
  pid_t w;
  do w = waitpid(pid_, &status, 0);
  while (w < 0 && errno == EINTR);
  reaped(w == pid_ ? status : 0);
  return *status_;
}

ChildExit run_child(const std::vector<std::string>& argv) {
  ChildExit r;
  try {
    ChildProcess child(argv);
    const int status = child.wait();
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    else r.exit_code = WEXITSTATUS(status);
  } catch (const ChildStartError& e) {
    r.start_error = e.what();
  }
  return r;
}

void ChildProcess::kill() {
  if (pid_ > 0 && !status_) ::kill(-pid_, SIGKILL);
}

}  // namespace dlsim
