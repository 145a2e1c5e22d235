#pragma once
// The logic of `dlsim plan INSTANCE.csv --planner NAME [--param k=v]... [--out SOLUTION.csv]
// [--time-limit S] [--json]`, as a library function the CLI calls.
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dlsim {

struct PlanCommandOptions {
  std::string instance_path;
  std::string planner = "greedy-by-size";
  std::vector<std::pair<std::string, std::string>> planner_params;  // key, value text (typed by the planner)
  std::optional<std::string> out_path;       // write id,lower,upper,size,offset here
  std::optional<double> time_limit_s;        // for planners that take time_limit_s (optimal); others ignore it
  bool json = false;
};

// Reads the instance, plans, checks the placement with the independent checker, writes the solution if asked
// and prints a summary (text, or with json one object with buffers, load, height, ratio, optimal,
// lower_bound, nodes, seconds). Returns 0. Bad input throws ConfigError (file, line, field); a placement the
// checker rejects throws std::logic_error (a planner bug).
int run_plan_command(const PlanCommandOptions& options, std::ostream& out);

}  // namespace dlsim
