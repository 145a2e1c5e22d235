#pragma once
// A program dlsim runs and waits for (the CBC solver, the Python helpers), started so that it dies with dlsim:
// - it leads a process group of its own, so that what it starts in turn goes with it, and so that a Ctrl-C at
//   the terminal reaches dlsim alone: dlsim decides (the sweep's first Ctrl-C lets runs under way finish, their
//   solver included; otherwise the fatal-signal cleanup kills the group, fatal_signal_cleanup.h);
// - on Linux it gets SIGKILL when the dlsim thread that started it ends (PR_SET_PDEATHSIG), which covers a dlsim
//   killed by SIGKILL or crashing, where no handler runs. Callers wait for their child on the thread that started
//   it, so the thread outlives the child. Elsewhere only the signal handler covers it.
// - a ChildProcess destroyed while the child runs (an exception on the way out) kills and reaps it.
// Started by fork and execve, not posix_spawn: the death signal must be set in the child before it executes.
// Between the two the child makes only async-signal-safe calls (dlsim may run other threads).
// The child's process group is in the background of a terminal: one with `stty tostop` stops a child writing to
// it (SIGTTOU). dlsim's helpers write to the terminal only through dlsim's own stdout when it is not one.
#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dlsim {

// The program could not be started: the message says why (not found, not executable, no memory to fork).
class ChildStartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ChildProcess {
 public:
  // Runs argv[0] (a path, or a name looked up on PATH) with `argv`. `output_file`: its stdout and stderr go to
  // this file (created, 0600); empty: they are dlsim's.
  ChildProcess(const std::vector<std::string>& argv, const std::string& output_file = "");
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // The wait status (as waitpid gives it) once the child has ended, else nothing. Reaps it.
  std::optional<int> try_wait();
  int wait();
  // SIGKILL to the child's group (what it started goes too); wait() then reaps it.
  void kill();

 private:
  void reaped(int status);
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// How a child that dlsim ran and waited for ended.
struct ChildExit {
  std::string start_error;  // why it could not be started (then nothing ran); empty when it ran
  int exit_code = 0;        // its exit status when it ended by itself
  int signal = 0;           // the signal that killed it, 0 when none
};

// Runs `argv` as a ChildProcess (no shell: each argument reaches the program as it is, whatever characters it
// holds) with dlsim's stdin, stdout and stderr, and waits for it to end.
ChildExit run_child(const std::vector<std::string>& argv);

// The path `program` runs from: itself when it has a '/', else the first executable of that name on PATH; empty
// when there is none.
std::string find_program(const std::string& program);

}  // namespace dlsim
