#include "cli/list_command.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace dlsim;

TEST_CASE("dlsim list shows every family with each parameter's default and valid values") {
  std::ostringstream out, err;
  CHECK(run_list_command(ListCommandOptions{}, out, err) == 0);
  const std::string s = out.str();
  for (const char* title : {"models:", "hardware (configs/hw):", "pools:", "offline planners", "swap policies:",
                            "concurrency policies:", "kernel cost models"})
    CHECK_THAT(s, Catch::Contains(title));
  CHECK_THAT(s, Catch::Contains("init_size_mb (int, default 0, valid: [0, 1073741824]): "));
  CHECK_THAT(s, Catch::Contains("color_method (string, default BF, valid: BF, FF): "));
  CHECK_THAT(s, Catch::Contains("compute_efficiency (double, default 0.6, valid: (0, 1]): "));
  CHECK_THAT(s, Catch::Contains("cannot_grow (bool, default false): "));  // any value of its type: no range
  CHECK(err.str().empty());
}
