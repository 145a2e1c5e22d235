#include "cli/sweep_command.h"

#include <CLI/CLI.hpp>

#include "cli/run_experiment.h"
#include "cli/sweep.h"

namespace dlsim {

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("sweep", "run the cartesian product of a sweep file");
  cmd->add_option("SWEEP", o.sweep, "sweep file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--results-dir", o.results_dir, "where results/<name>/ goes")->capture_default_str();
  cmd->add_option("--max-points", o.max_points,
                  "most points the sweep may expand to (default: the file's max_points, else 100000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  return cmd;
}

int run_sweep_command(const SweepCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  Sweep s = load_sweep(o.sweep, o.max_points);  // checks every point before anything runs
  SweepOptions opt;
  opt.results_dir = o.results_dir;
  int errors = run_sweep(s, opt, [](const Experiment& e) { return run_experiment(e); }, out);
  return errors ? 1 : 0;
}

}  // namespace dlsim
