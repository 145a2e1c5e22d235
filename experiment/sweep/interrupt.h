#pragma once
// Ctrl-C (SIGINT) and SIGTERM (what Slurm sends at a job's time limit) during `dlsim sweep`: while a
// StopOnSignal lives, the first such signal sets requested(); the sweep starts no further point, lets the runs
// under way finish and write their rows, and says how to resume. A second signal kills the process at once (the
// default action is restored), which --resume also survives.
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
