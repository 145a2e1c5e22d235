#include "cli/plan_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/config_error.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/placement_checker.h"

using namespace dlsim;

namespace {
std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("dlsim_plan_test_" + name)).string();
}
}  // namespace

TEST_CASE("plan command: --json summary and a solution file that passes the checker") {
  const std::string in = temp_path("in.csv"), out = temp_path("out.csv");
  {
    std::ofstream f(in);
    f << "id,lower,upper,size\n0,0,10,100\n1,0,5,60\n2,5,10,60\n3,2,8,30\n";
  }
  for (const std::string planner : {"greedy-by-size", "best-fit", "optimal"}) {
    PlanCommandOptions o;
    o.instance_path = in;
    o.planner = planner;
    o.out_path = out;
    o.time_limit_s = 1.0;
    o.json = true;
    std::ostringstream s;
    CHECK(run_plan_command(o, s, s) == 0);
    const auto j = nlohmann::json::parse(s.str());
    CHECK(j["buffers"] == 4);
    CHECK(j["load"] == 190);
    CHECK(j["height"] == 190);
    CHECK(j["ratio"] == 1.0);
    CHECK(j["optimal"] == true);
    CHECK(j.contains("seconds"));
    CHECK(read_instance_csv(out).size() == 4);
    std::ifstream f(out);
    std::string header;
    std::getline(f, header);
    CHECK(header == "id,lower,upper,size,offset");
  }
  PlanCommandOptions o;
  o.instance_path = in;
  std::ostringstream s;
  run_plan_command(o, s, s);
  CHECK(s.str().find("proved optimal") != std::string::npos);
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

TEST_CASE("plan command: bad planner names, parameters and files are ConfigErrors") {
  PlanCommandOptions o;
  o.instance_path = temp_path("missing.csv");
  std::ostringstream s;
  CHECK_THROWS_AS(run_plan_command(o, s, s), ConfigError);
  o.planner = "no-such-planner";
  CHECK_THROWS_WITH(run_plan_command(o, s, s), Catch::Contains("greedy-by-size"));
  o.planner = "optimal";
  o.params = {"tie_order=sideways"};
  const std::string in = temp_path("in2.csv");
  {
    std::ofstream f(in);
    f << "id,lower,upper,size\n0,0,10,100\n";
  }
  o.instance_path = in;
  CHECK_THROWS_AS(run_plan_command(o, s, s), ConfigError);
  o.params = {"no_such_param=1"};
  CHECK_THROWS_AS(run_plan_command(o, s, s), ConfigError);
  o.params = {"node_limit=-3"};  // a range error names the key where it was given
  CHECK_THROWS_WITH(run_plan_command(o, s, s), "<command line>: 'node_limit': must be >= 0, got -3");
  o.params = {"node_limit"};  // not KEY=VALUE
  CHECK_THROWS_WITH(run_plan_command(o, s, s), Catch::Contains("expected KEY=VALUE"));
  o.params = {};
  o.time_limit_s = -1;
  CHECK_THROWS_AS(run_plan_command(o, s, s), ConfigError);
  std::filesystem::remove(in);
}
