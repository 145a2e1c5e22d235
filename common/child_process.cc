#include "common/child_process.h"

#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>

extern char** environ;

namespace dlsim {

ChildExit run_child(const std::vector<std::string>& argv_in) {
  ChildExit out;
  if (argv_in.empty()) {
    out.spawn_error = EINVAL;
    return out;
  }
  std::vector<std::string> argv_s = argv_in;
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  out.spawn_error = posix_spawn(&pid, argv_s[0].c_str(), nullptr, nullptr, argv.data(), environ);
  if (out.spawn_error != 0) return out;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {  // cannot happen for our own child; report it as not run rather than guess an exit
      out.spawn_error = errno;
      return out;
    }
  }
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  else out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace dlsim
