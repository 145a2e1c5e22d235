#pragma once
// `dlsim plan INSTANCE.csv --planner NAME [--param KEY=VALUE]... [--out SOLUTION.csv] [--time-limit S] [--json]`:
// places buffers of known lifetimes (CSV id,lower,upper,size) with an offline planner, checks the placement
// with the independent checker, writes the solution if asked and prints a summary (text, or with --json one
// object: instance, planner, params, buffers, load, height, ratio, optimal, lower_bound, nodes, seconds).
// Bad input throws ConfigError (file, line, field; a --param outside its valid values names the key); a
// placement the checker rejects throws std::logic_error (a planner bug). Shape: cli/run_command.h.
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct PlanCommandOptions {
  std::string instance_path;
  std::string planner = "greedy-by-size";
  std::vector<std::string> params;        // "KEY=VALUE", typed and checked by the planner's specs
  std::optional<std::string> out_path;    // write id,lower,upper,size,offset here
  std::optional<double> time_limit_s;     // for planners that take time_limit_s (optimal); others ignore it
  bool json = false;
};

CLI::App* add_plan_command(CLI::App& app, PlanCommandOptions& o);
int run_plan_command(const PlanCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
