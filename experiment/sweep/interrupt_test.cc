// Two quick Ctrl-C's to a sweep: a forked stand-in for `dlsim sweep` (its own process group, as a shell's
// foreground job) holds a StopOnSignal, a solver-like child (`sleep`, started as CBC is) and its temporary
// folder. Ctrl-C reaches the whole group, as a terminal sends it: the first only asks the sweep to stop (the child
// in its own group runs on), the second ends the sweep, the child and the folder.
#include "experiment/sweep/interrupt.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/child_process.h"
#include "common/temp_dir.h"

using namespace dlsim;

namespace {

bool running(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return !(close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z');
}

}  // namespace

TEST_CASE("a second Ctrl-C to a sweep ends it with its children and their temporary folders") {
  int report[2];
  REQUIRE(pipe2(report, O_CLOEXEC) == 0);  // the sleeper must not hold the write end open
  const pid_t sweep = fork();
  REQUIRE(sweep >= 0);
  if (sweep == 0) {
    setpgid(0, 0);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    close(report[0]);
    try {
      StopOnSignal stop;
      TempDir dir("dlsim-interrupt-test");
      ChildProcess solver({"sleep", "600"});
      const pid_t sp = solver.pid();
      const std::string path = dir.path().string();
      if (write(report[1], &sp, sizeof sp) != sizeof sp) _exit(2);
      if (write(report[1], path.c_str(), path.size()) != static_cast<ssize_t>(path.size())) _exit(2);
      close(report[1]);
      while (!stop.requested()) pause();
      for (;;) pause();  // the runs under way go on
    } catch (...) {
      _exit(3);
    }
  }
  close(report[1]);
  pid_t solver = -1;
  REQUIRE(read(report[0], &solver, sizeof solver) == sizeof solver);
  std::string folder;
  char buf[4096];
  ssize_t n;
  while ((n = read(report[0], buf, sizeof buf)) > 0) folder.append(buf, static_cast<size_t>(n));
  close(report[0]);
  REQUIRE(std::filesystem::exists(folder));

  kill(-sweep, SIGINT);  // the terminal's Ctrl-C, to the foreground group
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int status = 0;
  CHECK(waitpid(sweep, &status, WNOHANG) == 0);  // still finishing its runs
  CHECK(running(solver));                         // the solver was not interrupted
  CHECK(std::filesystem::exists(folder));

  kill(-sweep, SIGINT);
  while (waitpid(sweep, &status, 0) < 0 && errno == EINTR) {
  }
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGINT);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (running(solver) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  CHECK_FALSE(running(solver));
  CHECK_FALSE(std::filesystem::exists(folder));
}
