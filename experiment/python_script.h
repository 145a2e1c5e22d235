#pragma once
// Runs one of dlsim's Python scripts with Debian's /usr/bin/python3: the figures are drawn by matplotlib there,
// from the CSV and pickle files the C++ side writes (docs/figures.md); the PyTorch front end records a training
// step there (frontend/torch/, docs/torch-step.md).
// Where they are found, each overridable from the environment for an installed binary or another Python:
//   DLSIM_PYTHON        the interpreter (default /usr/bin/python3: the `python3` on PATH may lack matplotlib)
//   DLSIM_SCRIPTS_DIR   the folder of the figure scripts (default $DLSIM_SOURCE_DIR/figures, else the source tree's)
//   DLSIM_FRONTEND_DIR  the folder of the PyTorch front end (default $DLSIM_SOURCE_DIR/frontend/torch, likewise)
#include <filesystem>
#include <string>
#include <vector>

namespace dlsim {

std::filesystem::path python_interpreter();
std::filesystem::path scripts_dir();
std::filesystem::path frontend_dir();

// Runs `python script args...` and waits; the script's stdout and stderr are the caller's. Returns its exit
// status (0-3; any other status of the interpreter is reported and returned as 1). Throws ConfigError (naming
// the variable that sets it) when the interpreter or the script is missing, or the script was killed by a
// signal.
// A file name as a script's positional argument: "./" before a relative name that starts with '-', which
// argparse would read as an option. Option values go as "--flag=value", where any text is a value.
std::string as_operand(const std::string& path);

int run_python_script(const std::string& script, const std::vector<std::string>& args);
// The same for any script path, with `interpreter` (a path, or a name looked up on PATH) instead of
// python_interpreter(); `variable` names what sets the interpreter in its errors (DLSIM_PYTHON, --python).
int run_python_file(const std::filesystem::path& interpreter, const std::string& variable,
                    const std::filesystem::path& script, const std::string& script_variable,
                    const std::vector<std::string>& args);

}  // namespace dlsim
