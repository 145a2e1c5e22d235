// The CBC runner against stand-ins for the `cbc` program put first on PATH: one that never returns (CBC inside a
// long root LP ignores its own time limit) must be stopped near the limit, not waited for.
#include "policies/swap/core/cbc_solver.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using namespace dlsim;

namespace {
namespace fs = std::filesystem;

// Puts a `cbc` script first on PATH for the scope.
struct FakeCbc {
  fs::path dir;
  std::string old_path;
  explicit FakeCbc(const std::string& body) {
    dir = fs::temp_directory_path() / ("dlsim-fake-cbc-" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()));
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
