#include "experiment/python_script.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>

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

std::filesystem::path frontend_dir() {
  return env_or("DLSIM_FRONTEND_DIR",
                (std::filesystem::path(env_or("DLSIM_SOURCE_DIR", DLSIM_SOURCE_DIR)) / "frontend" / "torch").string());
}

std::string as_operand(const std::string& path) { return !path.empty() && path[0] == '-' ? "./" + path : path; }

int run_python_script(const std::string& script, const std::vector<std::string>& args) {
  const std::filesystem::path python = python_interpreter();
  if (access(python.c_str(), X_OK) != 0)
    throw ConfigError(python.string(), 0, "DLSIM_PYTHON",
                      "no Python interpreter here (figures need Debian's python3 with python3-matplotlib; "
                      "scripts/install-deps.sh installs them, or set DLSIM_PYTHON)");
  return run_python_file(python, "DLSIM_PYTHON", scripts_dir() / script, "DLSIM_SCRIPTS_DIR", args);
}

int run_python_file(const std::filesystem::path& python, const std::string& variable, const std::filesystem::path& path,
                    const std::string& script_variable, const std::vector<std::string>& args) {
  if (!std::filesystem::is_regular_file(path))
    throw ConfigError(path.string(), 0, script_variable,
                      "script not found (set " + script_variable + " or DLSIM_SOURCE_DIR to the dlsim source tree)");
  std::vector<std::string> argv = {python.string(), path.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  // No shell: the arguments (file names) reach Python as they are (common/child_process.h).
  const ChildExit r = run_child(argv);
  if (!r.start_error.empty()) throw ConfigError(python.string(), 0, variable, "cannot start: " + r.start_error);
  if (r.signal != 0) throw ConfigError(path.string(), 0, "", "killed by signal " + std::to_string(r.signal));
  // The scripts exit 0, 1, 2 or 3 as dlsim does (figures/script_main.py); anything else (the interpreter's own
  // 120, say) is a failure, not a code of its own.
  if (r.exit_code > 3) {
    std::cerr << "dlsim: " << path.string() << " ended with exit status " << r.exit_code << "\n";
    return 1;
  }
  return r.exit_code;
}

}  // namespace dlsim
