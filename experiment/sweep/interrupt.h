#pragma once
// Ctrl-C (SIGINT) and SIGTERM (what Slurm sends at a job's time limit) during `dlsim sweep`: while a
// StopOnSignal lives, the first such signal sets requested(); the sweep starts no further point, lets the runs
// under way finish and write their rows (their solvers and helpers lead process groups of their own, so a Ctrl-C
// at the terminal does not reach them: common/child_process.h), and says how to resume. A second signal ends the
// process at once, after killing those children and removing their temporary folders
// (common/fatal_signal_cleanup.h); --resume also survives it.
#include <atomic>

namespace dlsim {

class StopOnSignal {
 public:
  StopOnSignal();   // installs the handlers (one StopOnSignal at a time)
  ~StopOnSignal();  // restores the previous ones
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  const std::atomic<bool>& requested() const;
  int signal() const;  // the signal that asked to stop (0: none)
};

}  // namespace dlsim
