#pragma once
// Runs another program as dlsim's child: by its path, with an argument vector, never through a shell, so that a
// file name or any other text from the user reaches the program as one argument, whatever characters it holds
// (no quoting to get wrong, nothing for a shell to expand or run). docs/security.md lists what dlsim runs.
#include <string>
#include <vector>

namespace dlsim {

struct ChildExit {
  int spawn_error = 0;  // errno of a program that could not be started (then nothing ran); 0 when it ran
  int exit_code = 0;    // its exit status when it ended by itself
  int signal = 0;       // the signal that killed it, 0 when none
};

// Starts argv[0] (a path, not looked up on PATH) with argv as its arguments and the caller's environment, stdin,
// stdout and stderr, and waits for it to end.
ChildExit run_child(const std::vector<std::string>& argv);

}  // namespace dlsim
