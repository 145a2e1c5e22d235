#pragma once
// `dlsim compare SIM_TRACE REAL_TRACE --plan DIR/plan.json [--json]`: per-op and per-iteration error tables of a
// simulated trace against a measured one (validate/calibrate/compare.h). Shape: cli/run_command.h.
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct CompareCommandOptions {
  std::string sim_trace;   // trace.sim.json
  std::string real_trace;  // trace.cuda.json
  std::string plan;        // plan.json of the run (op names)
  bool json = false;       // the whole comparison as one JSON object
};

CLI::App* add_compare_command(CLI::App& app, CompareCommandOptions& o);
int run_compare_command(const CompareCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
