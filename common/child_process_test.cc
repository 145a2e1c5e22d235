// Children that die with dlsim: each case forks a stand-in for dlsim that starts `sleep` through ChildProcess and
// makes a TempDir, reports both through a pipe, and is then ended by a signal; the child must be gone and (unless
// no handler could run) the folder removed.
#include "common/child_process.h"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "common/fatal_signal_cleanup.h"
#include "common/temp_dir.h"

using namespace dlsim;

namespace {

namespace fs = std::filesystem;

// Gone, or a zombie no one has reaped yet (its parent, the stand-in, is dead): either way not running.
bool ended(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && (line[close + 2] == 'Z' || line[close + 2] == 'X');
}

bool ends_within(pid_t pid, double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (ended(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ended(pid);
}

struct StandIn {
  pid_t pid = -1;       // the stand-in for dlsim
  pid_t sleeper = -1;   // the child it started
  std::string folder;   // the TempDir it made
};

// Forks a stand-in that makes a TempDir with a file in it, starts `sleep 600`, reports both, and waits for a
// signal. The stand-in never returns into Catch.
StandIn start_stand_in() {
  int report[2];
  REQUIRE(pipe2(report, O_CLOEXEC) == 0);  // the sleeper must not hold the write end open
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(report[0]);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);  // as in dlsim, not Catch's handlers
    try {
      TempDir dir("dlsim-child-test");
      std::ofstream(dir.path() / "model.lp") << "a file the child would read\n";
      ChildProcess sleeper({"sleep", "600"});
      const pid_t sp = sleeper.pid();
      const std::string path = dir.path().string();
      if (write(report[1], &sp, sizeof sp) != sizeof sp) _exit(2);
      if (write(report[1], path.c_str(), path.size()) != static_cast<ssize_t>(path.size())) _exit(2);
      close(report[1]);
      for (;;) pause();
    } catch (...) {
      _exit(3);
    }
  }
  close(report[1]);
  StandIn s;
  s.pid = pid;
  REQUIRE(read(report[0], &s.sleeper, sizeof s.sleeper) == sizeof s.sleeper);
  char buf[4096];
  ssize_t n;
  while ((n = read(report[0], buf, sizeof buf)) > 0) s.folder.append(buf, static_cast<size_t>(n));
  close(report[0]);
  return s;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

TEST_CASE("a child leads its own process group and is killed and reaped with its ChildProcess") {
  pid_t pid = -1;
  {
    ChildProcess sleeper({"sleep", "600"});
    pid = sleeper.pid();
    CHECK(getpgid(pid) == pid);
    CHECK_FALSE(sleeper.try_wait());
  }  // destroyed while running: killed and reaped
  CHECK(kill(pid, 0) != 0);
}

TEST_CASE("a child that exits gives its status, and a program that is not there is an error") {
  ChildProcess ok({"sh", "-c", "exit 7"});
  const int status = ok.wait();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 7);
  CHECK_THROWS_AS(ChildProcess({"dlsim-no-such-program"}), ChildStartError);
  CHECK_THROWS_WITH(ChildProcess({"/nonexistent/dir/prog"}), Catch::Contains("not found"));
}

TEST_CASE("output goes to the named file") {
  TempDir dir("dlsim-child-test");
  const fs::path log = dir.path() / "log.txt";
  ChildProcess echo({"sh", "-c", "echo out; echo err >&2"}, log.string());
  CHECK(WEXITSTATUS(echo.wait()) == 0);
  std::ifstream in(log);
  std::string a, b;
  in >> a >> b;
  CHECK(a == "out");
  CHECK(b == "err");
}

TEST_CASE("SIGTERM, SIGINT and SIGHUP to dlsim kill its children and remove their temporary folders") {
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) {
    INFO("signal " << sig);
    const StandIn s = start_stand_in();
    REQUIRE(s.sleeper > 0);
    REQUIRE(fs::exists(fs::path(s.folder) / "model.lp"));
    CHECK(s.folder.find("dlsim-child-test-" + std::to_string(s.pid) + "-") != std::string::npos);
    kill(s.pid, sig);
    const int status = wait_for(s.pid);
    CHECK(WIFSIGNALED(status));  // it ends as the signal would have ended it
    CHECK(WTERMSIG(status) == sig);
    CHECK(ends_within(s.sleeper, 5));
    CHECK_FALSE(fs::exists(s.folder));
  }
}

#ifdef __linux__
TEST_CASE("SIGKILL to dlsim still ends its children (PR_SET_PDEATHSIG), and only the folder stays") {
  const StandIn s = start_stand_in();
  kill(s.pid, SIGKILL);
  wait_for(s.pid);
  CHECK(ends_within(s.sleeper, 5));
  CHECK(fs::exists(s.folder));  // what no handler can do, documented in fatal_signal_cleanup.h
  std::error_code ec;
  fs::remove_all(s.folder, ec);
}
#endif

TEST_CASE("a TempDir is removed with what it holds, and unregistered") {
  fs::path p;
  {
    TempDir d("dlsim-child-test");
    p = d.path();
    fs::create_directories(p / "sub");
    std::ofstream(p / "sub" / "f") << "x";
  }
  CHECK_FALSE(fs::exists(p));
  run_fatal_signal_cleanup();  // nothing registered any more: harmless
}

TEST_CASE("run_child: each argument reaches the program as it is, with no shell to expand or run it") {
  const fs::path marker = fs::temp_directory_path() / ("dlsim_child_test_" + std::to_string(::getpid()));
  fs::remove(marker);
  // Through a shell, the text would create the marker; as an argument of test(1) it is only compared.
  const ChildExit r = run_child({"/usr/bin/test", "x; touch " + marker.string(), "=", "x; touch " + marker.string()});
  CHECK(r.start_error.empty());
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 0);  // test(1) found the two strings equal
  CHECK_FALSE(fs::exists(marker));
  CHECK(run_child({"/usr/bin/test", "a", "=", "b"}).exit_code == 1);
}

TEST_CASE("run_child: a program that does not exist is reported, not run, and a killed child reports its signal") {
  CHECK(run_child({"/no/such/program"}).start_error.find("/no/such/program") != std::string::npos);
  CHECK_FALSE(run_child({}).start_error.empty());
  const ChildExit r = run_child({"/bin/sh", "-c", "kill -TERM $$"});
  CHECK(r.start_error.empty());
  CHECK(r.signal == SIGTERM);
}
