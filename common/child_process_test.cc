#include <catch2/catch.hpp>

#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/child_process.h"

using dlsim::run_child;
namespace fs = std::filesystem;

TEST_CASE("a child gets each argument as it is, with no shell to expand or run it") {
  const fs::path marker = fs::temp_directory_path() / ("dlsim_child_test_" + std::to_string(::getpid()));
  fs::remove(marker);
  // Through a shell, the second argument would create the marker; as an argument of test(1) it is just text.
  const auto r = run_child({"/usr/bin/test", "x; touch " + marker.string(), "=", "x; touch " + marker.string()});
  CHECK(r.spawn_error == 0);
  CHECK(r.signal == 0);
  CHECK(r.exit_code == 0);  // test(1) compared the two strings: equal
  CHECK_FALSE(fs::exists(marker));
  CHECK(run_child({"/usr/bin/test", "a", "=", "b"}).exit_code == 1);
}

TEST_CASE("a program that does not exist is reported, not run, and a killed child reports its signal") {
  CHECK(run_child({"/no/such/program"}).spawn_error == ENOENT);
  CHECK(run_child({}).spawn_error == EINVAL);
  const auto r = run_child({"/bin/sh", "-c", "kill -TERM $$"});
  CHECK(r.spawn_error == 0);
  CHECK(r.signal == 15);
}
