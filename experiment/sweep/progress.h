#pragma once
// What `dlsim sweep` says while it runs: on a terminal one line rewritten in place (done/total, failures,
// elapsed, ETA); elsewhere (a log file, CI, a Slurm output file) one plain line per finished point.
#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

namespace dlsim {

class SweepProgress {
 public:
  enum class Style { Quiet, Lines, Terminal };
  // total: the points this process runs; already_done: those of them that --resume found finished.
  SweepProgress(std::ostream& out, Style style, size_t total, size_t already_done);
  // A point finished; `what` names it. Thread-safe.
  void finished(const std::string& what, const std::string& status, bool failed);
  // Ends the rewritten line (a terminal) before anything else is printed.
  void close();
  size_t done() const;
  size_t failures() const;

 private:
  std::string figures() const;  // "12/100 done, 1 failed, 3.2 s elapsed, ETA 24 s"
  std::ostream& out_;
  Style style_;
  size_t total_, skipped_, done_, failures_ = 0;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  bool open_line_ = false;
};

// "4.2 s", "3 min 05 s", "2 h 07 min".
std::string duration_text(double seconds);

}  // namespace dlsim
