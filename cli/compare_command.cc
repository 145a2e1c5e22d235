#include "cli/compare_command.h"

#include <CLI/CLI.hpp>

#include "validate/calibrate/harness_commands.h"

namespace dlsim {

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("compare", "error tables: simulated trace against a measured one");
  cmd->add_option("SIM_TRACE", o.sim_trace, "trace.sim.json")->required()->check(CLI::ExistingFile);
  cmd->add_option("REAL_TRACE", o.real_trace, "trace.cuda.json")->required()->check(CLI::ExistingFile);
  cmd->add_option("--plan", o.plan, "plan.json of the run (op names)")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o.json, "print the whole comparison (every op, per-kind sums) as one JSON object");
  return cmd;
}

int run_compare_command(const CompareCommandOptions& o, std::ostream& out, std::ostream& err) {
  return run_compare(o.sim_trace, o.real_trace, o.plan, out, err, o.json);
}

}  // namespace dlsim
