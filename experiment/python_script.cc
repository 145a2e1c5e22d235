#include "experiment/python_script.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "common/child_process.h"
#include "common/config_error.h"

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
  int status = 0;
  try {
    // Its own process group, killed with dlsim (common/child_process.h); no shell: the arguments (file names)
    // reach Python as they are, with nothing to quote.
    ChildProcess python_run(argv_s);
    status = python_run.wait();
  } catch (const ChildStartError& e) {
    throw ConfigError(python.string(), 0, "DLSIM_PYTHON", std::string("cannot start: ") + e.what());
  }
  if (WIFSIGNALED(status))
    throw ConfigError(path.string(), 0, "", "killed by signal " + std::to_string(WTERMSIG(status)));
  return WEXITSTATUS(status);
}

}  // namespace dlsim
