#include "cli/plan_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <ostream>
#include <stdexcept>

#include "common/config_error.h"
#include "common/strings.h"
#include "policies/planners/instance_csv.h"
#include "policies/planners/load.h"
#include "policies/planners/placement_checker.h"
#include "policies/planners/planner.h"

namespace dlsim {

CLI::App* add_plan_command(CLI::App& app, PlanCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("plan", "place buffers of known lifetimes (CSV id,lower,upper,size)");
  cmd->add_option("INSTANCE", o.instance_path, "instance CSV")->required();
  cmd->add_option("--planner", o.planner, join(planner_registry().names()))->capture_default_str();
  cmd->add_option("--param", o.params, "planner parameter KEY=VALUE (repeatable; dlsim list shows them)");
  cmd->add_option_function<std::string>(
      "--out", [&o](const std::string& path) { o.out_path = path; }, "write the solution CSV (the rows with offset)");
  cmd->add_option_function<double>(
      "--time-limit", [&o](const double& s) { o.time_limit_s = s; }, "seconds: the planner's time_limit_s");
  cmd->add_flag("--json", o.json, "print one JSON object");
  return cmd;
}

int run_plan_command(const PlanCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  const auto& entry = planner_registry().get(o.planner, "<command line>", 0, "--planner");
  Params params(entry.params);
  for (const std::string& kv : o.params) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("<command line>", 0, "--param", "expected KEY=VALUE, got '" + kv + "'");
    set_param_from_text(entry.params, params, kv.substr(0, eq), kv.substr(eq + 1), entry.name);
  }
  if (o.time_limit_s) {
    if (!(*o.time_limit_s > 0)) throw ConfigError("<command line>", 0, "--time-limit", "must be > 0 seconds");
    if (params.has("time_limit_s")) set_param_checked(entry.params, params, "time_limit_s", *o.time_limit_s, "--time-limit");
  }
  const auto buffers = read_instance_csv(o.instance_path);
  const auto planner = entry.factory(params);

  const auto t0 = std::chrono::steady_clock::now();
  const PlanResult r = planner->plan(buffers);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  if (auto bad = check_placement(buffers, r.offsets))
    throw std::logic_error("planner '" + entry.name + "' produced an invalid placement: " + *bad);
  const uint64_t load = compute_load(buffers);
  if (o.out_path) write_solution_csv(*o.out_path, buffers, r.offsets);
  const double ratio = load ? static_cast<double>(r.height) / static_cast<double>(load) : 1.0;

  if (o.json) {
    nlohmann::json j = {{"instance", o.instance_path},
                        {"planner", entry.name},
                        {"params", params.summary()},
                        {"buffers", buffers.size()},
                        {"load", load},
                        {"height", r.height},
                        {"ratio", ratio},
                        {"optimal", r.optimal},
                        {"lower_bound", r.lower_bound},
                        {"nodes", r.nodes},
                        {"seconds", seconds}};
    if (!r.complete) j["stopped_at_time_limit"] = true;  // said only then: other outputs stay as they were
    out << j.dump() << '\n';
  } else {
    char line[256];
    std::snprintf(line, sizeof line, "%zu buffers, LOAD %llu, height %llu (%.6f x LOAD), %s, %.3f s\n",
                  buffers.size(), static_cast<unsigned long long>(load), static_cast<unsigned long long>(r.height),
                  ratio,
                  r.optimal ? "proved optimal"
                            : ("not proved optimal (lower bound " + std::to_string(r.lower_bound) + ")").c_str(),
                  seconds);
    out << o.instance_path << " with " << entry.name << ": " << line;
    if (!r.complete) out << "stopped at the time limit: the buffers not yet placed are stacked on top\n";
    if (o.out_path) out << "solution written to " << *o.out_path << '\n';
  }
  return 0;
}

}  // namespace dlsim
