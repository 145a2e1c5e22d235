#pragma once
// `dlsim report SWEEP_DIR [--metric COLUMN]`: SWEEP_DIR/report.md and report.html (figures inline), a report a
// reader can follow without the sweep's YAML: what was swept, the outcome, a table per setting, the best policy of
// each with its margin over the runner-up (by --metric, lower wins; default iteration_time_us), and the sweep's
// figures (those its `plots:` drew, else one drawn for the report). Written by figures/sweep_report.py.
// Exit 0 written, 2 bad input (no runs.csv, a metric that is not a column: the message lists the columns).
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct ReportCommandOptions {
  std::string sweep_dir;
  std::string metric = "iteration_time_us";
};

CLI::App* add_report_command(CLI::App& app, ReportCommandOptions& o);
int run_report_command(const ReportCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
