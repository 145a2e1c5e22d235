#pragma once
// `dlsim validate EXPERIMENT.yaml --out DIR [--warmup N] [--iterations N] [--microbench] [--cuda-binary PATH]`:
// simulates the experiment, writes DIR/plan.json and DIR/trace.sim.json, runs dlsim-cuda on a real GPU and
// compares. Exit 3 when there is no GPU (or no dlsim-cuda). Its options are the harness's own
// (validate/calibrate/harness_commands.h). Shape: cli/run_command.h.
#include <iosfwd>

#include "validate/calibrate/harness_commands.h"

namespace CLI {
class App;
}

namespace dlsim {

using ValidateCommandOptions = ValidateOptions;

CLI::App* add_validate_command(CLI::App& app, ValidateCommandOptions& o);
int run_validate_command(const ValidateCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
