// The CBC runner against stand-ins for the `cbc` program put first on PATH: one that never returns (CBC inside a
// long root LP ignores its own time limit) must be stopped near the limit, not waited for.
#include "policies/swap/core/cbc_solver.h"

#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

using namespace dlsim;

namespace {
namespace fs = std::filesystem;

// Puts a `cbc` script first on PATH for the scope.
struct FakeCbc {
  fs::path dir;
  std::string old_path;
  explicit FakeCbc(const std::string& body) {
    // The process id too: CTest runs the cases as parallel processes, whose clocks may read the same tick.
    dir = fs::temp_directory_path() / ("dlsim-fake-cbc-" + std::to_string(getpid()) + "-" +
                                       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(dir);
    std::ofstream(dir / "cbc") << "#!/bin/sh\n" << body << "\n";
    fs::permissions(dir / "cbc", fs::perms::owner_all);
    const char* p = std::getenv("PATH");
    old_path = p ? p : "";
    setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  }
  ~FakeCbc() {
    setenv("PATH", old_path.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};
}  // namespace

TEST_CASE("a cbc still running well past its time limit is stopped, and the result says so") {
  FakeCbc fake("exec sleep 600");
  const auto t0 = std::chrono::steady_clock::now();
  const MilpResult r = solve_with_cbc("Minimize\n obj: x\nSubject To\n c1: x >= 0\nEnd\n", 0.2);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.status == "killed");
  CHECK_FALSE(r.has_solution);
  CHECK(took >= 5.3);   // 1.5 x 0.2 s + 5 s of grace
  CHECK(took < 60.0);   // not the 600 s the stand-in would take
}

TEST_CASE("a cbc that fails is an error that quotes it") {
  FakeCbc fake("echo 'out of licence' ; exit 3");
  CHECK_THROWS_WITH(solve_with_cbc("Minimize\n obj: x\nEnd\n", 1), Catch::Contains("cbc failed (exit 3)") && Catch::Contains("out of licence"));
}

TEST_CASE("dlsim ended by a signal while CBC runs takes the solver and its model folder with it") {
  FakeCbc fake("echo $$ > \"$(dirname \"$0\")/cbc.pid\"; exec sleep 600");
  const fs::path pid_file = fake.dir / "cbc.pid";
  const pid_t run = fork();  // a stand-in for dlsim, solving
  REQUIRE(run >= 0);
  if (run == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
    try {
      solve_with_cbc("Minimize\n obj: x\nSubject To\n c1: x >= 0\nEnd\n", 600);
    } catch (...) {
    }
    _exit(0);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fs::exists(pid_file) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the pid written whole
  pid_t cbc = 0;
  std::ifstream(pid_file) >> cbc;
  REQUIRE(cbc > 0);
  const std::string prefix = "dlsim-cbc-" + std::to_string(run) + "-";
  auto model_folders = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
      if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
    return n;
  };
  CHECK(model_folders() == 1);
  kill(run, SIGTERM);
  int status = 0;
  while (waitpid(run, &status, 0) < 0 && errno == EINTR) {
  }
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGTERM);
  bool gone = false;
  for (int i = 0; i < 500 && !gone; ++i) {  // killed: gone, or a zombie its new parent has not reaped yet
    std::ifstream stat("/proc/" + std::to_string(cbc) + "/stat");
    std::string line;
    std::getline(stat, line);
    gone = line.empty() || line.find(") Z") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(gone);
  CHECK(model_folders() == 0);
}
