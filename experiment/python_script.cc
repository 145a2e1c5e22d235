#include "experiment/python_script.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/config_error.h"

extern char** environ;

namespace dlsim {

namespace {

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v && *v) ? std::string(v) : fallback;
}

}  // namespace

std::filesystem::path python_interpreter() { return env_or("DLSIM_PYTHON", "/usr/bin/python3"); }

std::filesystem::path scripts_dir() {
  return env_or("DLSIM_SCRIPTS_DIR", (std::filesystem::path(env_or("DLSIM_SOURCE_DIR", DLSIM_SOURCE_DIR)) / "figures").string());
}

int run_python_script(const std::string& script, const std::vector<std::string>& args) {
  const std::filesystem::path python = python_interpreter();
  if (access(python.c_str(), X_OK) != 0)
    throw ConfigError(python.string(), 0, "DLSIM_PYTHON",
                      "no Python interpreter here (figures need Debian's python3 with python3-matplotlib; "
                      "scripts/install-deps.sh installs them, or set DLSIM_PYTHON)");
  const std::filesystem::path path = scripts_dir() / script;
  if (!std::filesystem::is_regular_file(path))
    throw ConfigError(path.string(), 0, "DLSIM_SCRIPTS_DIR",
                      "script not found (set DLSIM_SCRIPTS_DIR or DLSIM_SOURCE_DIR to the dlsim source tree)");
  std::vector<std::string> argv_s = {python.string(), path.string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  // posix_spawn, not system(): the arguments (file names) reach Python as they are, with no shell to quote for.
  const int rc = posix_spawn(&pid, python.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) throw ConfigError(python.string(), 0, "DLSIM_PYTHON", std::string("cannot start: ") + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw ConfigError(python.string(), 0, "", std::string("waitpid: ") + std::strerror(errno));
  if (WIFSIGNALED(status))
    throw ConfigError(path.string(), 0, "", "killed by signal " + std::to_string(WTERMSIG(status)));
  return WEXITSTATUS(status);
}

}  // namespace dlsim
