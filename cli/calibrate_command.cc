#include "cli/calibrate_command.h"

#include <CLI/CLI.hpp>

#include "validate/commands.h"

namespace dlsim {

CLI::App* add_calibrate_command(CLI::App& app, CalibrateCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("calibrate", "fit the hardware model to validate runs");
  cmd->add_option("DIR", o.dirs, "validate output folders")->required()->check(CLI::ExistingDirectory);
  cmd->add_option("--hw", o.hw, "hardware file to start from")->required()->check(CLI::ExistingFile);
  cmd->add_option("--out", o.out, "calibrated hardware file to write")->required();
  return cmd;
}

int run_calibrate_command(const CalibrateCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  return run_calibrate(o.dirs, o.hw, o.out, out);
}

}  // namespace dlsim
