// dlsim: one binary, subcommands. YAML in, tables and JSON out. Errors in the user's input print where they
// are (file, line, key) and exit 2; an out-of-memory result of `run` exits 3. Each subcommand is one file in
// cli/ of one shape (cli/run_command.h): its options, add_x_command, run_x_command.
#include <CLI/CLI.hpp>

#include <functional>
#include <iostream>
#include <vector>

#include "cli/calibrate_command.h"
#include "cli/compare_command.h"
#include "cli/fit_command.h"
#include "cli/list_command.h"
#include "cli/model_command.h"
#include "cli/plan_command.h"
#include "cli/plot_command.h"
#include "cli/plot_memory_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/simfuzz_command.h"
#include "cli/sweep_command.h"
#include "cli/validate_command.h"
#include "common/config_error.h"

namespace {

// One subcommand as main sees it: the CLI11 subcommand, and what to run when it was chosen.
struct Subcommand {
  CLI::App* app;
  std::function<int()> run;
};

// Registers the subcommand and binds its run function to the options it fills.
template <class Options>
Subcommand subcommand(CLI::App& app, Options& o, CLI::App* (*add)(CLI::App&, Options&),
                      int (*run)(const Options&, std::ostream&, std::ostream&)) {
  return {add(app, o), [&o, run] { return run(o, std::cout, std::cerr); }};
}

}  // namespace

int main(int argc, char** argv) {
  using namespace dlsim;
  CLI::App app{"dlsim: a discrete-event simulator of deep-learning training on GPUs (memory pools, swapping, "
               "stream concurrency)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "dlsim 0.1.0");

  RunCommandOptions run;
  ModelCommandOptions model;
  ListCommandOptions list;
  SweepCommandOptions sweep;
  PlanCommandOptions plan;
  ValidateCommandOptions validate;
  CalibrateCommandOptions calibrate;
  CompareCommandOptions compare;
  FitCommandOptions fit;
  SimfuzzCommandOptions simfuzz;
  PlotCommandOptions plot;
  PlotMemoryCommandOptions plot_memory;
  ReportCommandOptions report;
  const std::vector<Subcommand> subcommands = {
      subcommand(app, run, add_run_command, run_run_command),
      subcommand(app, model, add_model_command, run_model_command),
      subcommand(app, list, add_list_command, run_list_command),
      subcommand(app, sweep, add_sweep_command, run_sweep_command),
      subcommand(app, plan, add_plan_command, run_plan_command),
      subcommand(app, validate, add_validate_command, run_validate_command),
      subcommand(app, calibrate, add_calibrate_command, run_calibrate_command),
      subcommand(app, compare, add_compare_command, run_compare_command),
      subcommand(app, fit, add_fit_command, run_fit_command),
      subcommand(app, simfuzz, add_simfuzz_command, run_simfuzz_command),
      subcommand(app, plot, add_plot_command, run_plot_command),
      subcommand(app, plot_memory, add_plot_memory_command, run_plot_memory_command),
      subcommand(app, report, add_report_command, run_report_command),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }

  try {
    for (const Subcommand& s : subcommands)
      if (*s.app) return s.run();
  } catch (const ConfigError& e) {
    std::cerr << "dlsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "dlsim: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
