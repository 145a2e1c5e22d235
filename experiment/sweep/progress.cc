#include "experiment/sweep/progress.h"

#include <cstdio>
#include <ostream>

namespace dlsim {

std::string duration_text(double s) {
  char buf[64];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  } else if (s < 3600) {
    const long t = static_cast<long>(s);
    std::snprintf(buf, sizeof buf, "%ld min %02ld s", t / 60, t % 60);
  } else {
    const long t = static_cast<long>(s) / 60;
    std::snprintf(buf, sizeof buf, "%ld h %02ld min", t / 60, t % 60);
  }
  return buf;
}

SweepProgress::SweepProgress(std::ostream& out, Style style, size_t total, size_t already_done)
    : out_(out), style_(style), total_(total), skipped_(already_done), done_(already_done),
      start_(std::chrono::steady_clock::now()) {}

std::string SweepProgress::figures() const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string s = std::to_string(done_) + "/" + std::to_string(total_) + " done";
  if (failures_) s += ", " + std::to_string(failures_) + " failed";
  s += ", " + duration_text(elapsed) + " elapsed";
  const size_t ran = done_ - skipped_;  // the ETA counts only the runs of this process
  if (ran > 0 && done_ < total_)
    s += ", ETA " + duration_text(elapsed / static_cast<double>(ran) * static_cast<double>(total_ - done_));
  return s;
}

void SweepProgress::finished(const std::string& what, const std::string& status, bool failed) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  if (failed) ++failures_;
  if (style_ == Style::Lines) {
    out_ << "[" << done_ << "/" << total_ << "] " << what << ": " << status << '\n';
  } else if (style_ == Style::Terminal) {
    if (failed) out_ << "\r\033[K" << what << ": " << status << '\n';  // a failure stays on screen
    out_ << "\r\033[K" << figures() << std::flush;
    open_line_ = true;
  }
}

void SweepProgress::close() {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (style_ == Style::Quiet) return;
  if (open_line_) out_ << "\r\033[K";
  open_line_ = false;
  out_ << figures() << '\n';
}

size_t SweepProgress::done() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

size_t SweepProgress::failures() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return failures_;
}

}  // namespace dlsim
