#include "experiment/sweep/interrupt.h"

#include <csignal>

#include "common/fatal_signal_cleanup.h"

namespace dlsim {

namespace {

// Lock-free atomics are safe to touch in a signal handler.
std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};
struct sigaction g_previous_int, g_previous_term;

extern "C" void on_stop_signal(int sig) {
  // A second Ctrl-C ends the process at once, its solvers and helpers and their temporary folders with it.
  if (g_stop_requested) die_of_signal_after_cleanup(sig);
  g_stop_signal = sig;
  g_stop_requested = true;
}

}  // namespace

StopOnSignal::StopOnSignal() {
  static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
  g_stop_requested = false;
  g_stop_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &g_previous_int);
  sigaction(SIGTERM, &sa, &g_previous_term);
}

StopOnSignal::~StopOnSignal() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
}

const std::atomic<bool>& StopOnSignal::requested() const { return g_stop_requested; }
int StopOnSignal::signal() const { return g_stop_signal; }

}  // namespace dlsim
