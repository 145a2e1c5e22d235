#include "cli/run_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <sstream>

using namespace dlsim;

TEST_CASE("dlsim run --json names the kernel model, and the table names it too") {
  RunCommandOptions o;
  o.experiment = std::string(DLSIM_SOURCE_DIR) + "/configs/experiments/resnet50-cnmem.yaml";
  o.json = true;
  std::ostringstream json, err;
  CHECK(run_run_command(o, json, err) == 0);
  const auto j = nlohmann::json::parse(json.str());
  CHECK(j["kernel_model"] == "roofline");
  CHECK(j["kernel_report"].empty());  // the roofline has no table to report on
  CHECK(j["oom"] == false);

  o.json = false;
  std::ostringstream text;
  CHECK(run_run_command(o, text, err) == 0);
  CHECK_THAT(text.str(), Catch::Contains("hardware          h100-sxm, kernel model roofline\n"));
  CHECK_THAT(text.str(), Catch::Contains("peak live         2849.2 MiB  (lower bound for any pool)\n"));
}
