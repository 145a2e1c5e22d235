#pragma once
// What must not outlive dlsim when a signal ends it: the child processes it started (the CBC solver, the Python
// helpers) and the temporary folders they work in. Each is registered while it exists; a handler for SIGINT,
// SIGTERM and SIGHUP kills the registered children's process groups, removes the registered folders, and lets the
// signal end dlsim as it would have (same signal, same exit status).
//
// The handler may run in any thread at any moment, so it only reads lock-free slots and makes async-signal-safe
// calls (kill, open, getdents64, unlinkat, rmdir, close). A fixed number of slots: past them a child or folder is
// simply not registered (children still die with dlsim on Linux, child_process.h).
//
// What no handler can do: SIGKILL (and a crash that skips handlers) ends dlsim with no cleanup. Children started
// through child_process.h die with it all the same on Linux (PR_SET_PDEATHSIG); their temporary folder stays,
// named dlsim-<what>-<pid>-XXXXXX under the temporary directory so that the run that left it can be told.
#include <sys/types.h>

#include <string>

namespace dlsim {

// Installs the handler for SIGINT, SIGTERM and SIGHUP wherever the signal still has its default action (an
// ignored signal stays ignored, e.g. under nohup; a handler someone installed, e.g. the sweep's StopOnSignal,
// stays and calls run_fatal_signal_cleanup itself). Cheap; called again by each registration, so that a default
// action restored later (a StopOnSignal gone) gets the handler back.
void install_fatal_signal_cleanup();

// A child's process group (its pid: children lead their own group) to kill with SIGKILL. Thread-safe.
void register_child_group(pid_t pgid);
void unregister_child_group(pid_t pgid);

// A folder to remove (its files and empty subfolders; one level deep is what dlsim's children write). Thread-safe.
void register_temp_dir(const std::string& path);
void unregister_temp_dir(const std::string& path);

// Kills the registered groups and removes the registered folders. Async-signal-safe: for handlers.
void run_fatal_signal_cleanup();

// run_fatal_signal_cleanup, then `sig` with its default action, re-raised: the process ends as the signal would
// have ended it. For handlers.
[[noreturn]] void die_of_signal_after_cleanup(int sig);

}  // namespace dlsim
