#include "cli/report_command.h"

#include <CLI/CLI.hpp>

#include "experiment/python_script.h"

namespace dlsim {

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("report", "write report.md and report.html for a sweep's results folder");
  cmd->add_option("SWEEP_DIR", o.sweep_dir, "a sweep's results folder (runs.csv, summary.md, figures)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--metric", o.metric, "the column the best policy of each setting is chosen by (lower wins)")
      ->capture_default_str();
  return cmd;
}

int run_report_command(const ReportCommandOptions& o, std::ostream& /*out*/, std::ostream& /*err*/) {
  return run_python_script("sweep_report.py", {as_operand(o.sweep_dir), "--metric=" + o.metric});
}

}  // namespace dlsim
