// dlsim: one binary, subcommands. YAML in, tables and JSON out. Errors in the user's input print where they
// are (file, line, key) and exit 2; an out-of-memory result of `run` exits 3. Each subcommand is one file in
// cli/ of one shape (cli/run_command.h): its options, add_x_command, run_x_command.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "cli/calibrate_command.h"
#include "cli/compare_command.h"
#include "cli/fit_command.h"
#include "cli/fit_interconnect_command.h"
#include "cli/fit_kernels_command.h"
#include "cli/import_torch_command.h"
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

constexpr int kExitBadInput = 2;  // docs/cli.md

// "PATH: reason" for a filesystem_error: the path(s) it names and the system's words for what went wrong.
std::string path_error_text(const std::filesystem::filesystem_error& e) {
  std::string where = e.path1().string();
  if (!e.path2().empty()) where += " -> " + e.path2().string();
  return (where.empty() ? std::string("<a path>") : where) + ": " + e.code().message();
}

// Flushes standard output; "" when everything printed reached it, else the reason it did not.
std::string stdout_problem() {
  std::cout.flush();
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout)
    // stdio drops a buffer it could not write and forgets why: the reason is known only for the last one.
    return errno ? std::strerror(errno) : "a write failed (a full disk or device, a file-size limit, an I/O error)";
  return "";
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
  FitKernelsCommandOptions fit_kernels;
  FitInterconnectCommandOptions fit_interconnect;
  SimfuzzCommandOptions simfuzz;
  PlotCommandOptions plot;
  PlotMemoryCommandOptions plot_memory;
  ReportCommandOptions report;
  ImportTorchCommandOptions import_torch;
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
      subcommand(app, fit_kernels, add_fit_kernels_command, run_fit_kernels_command),
      subcommand(app, fit_interconnect, add_fit_interconnect_command, run_fit_interconnect_command),
      subcommand(app, simfuzz, add_simfuzz_command, run_simfuzz_command),
      subcommand(app, plot, add_plot_command, run_plot_command),
      subcommand(app, plot_memory, add_plot_memory_command, run_plot_memory_command),
      subcommand(app, report, add_report_command, run_report_command),
      subcommand(app, import_torch, add_import_torch_command, run_import_torch_command),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and exit 0; every other parse error is a mistake on the command line: CLI11's
    // message, then the documented code for bad input (not CLI11's own 105-114).
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitBadInput;
  }

  int rc = 0;
  try {
    for (const Subcommand& s : subcommands)
      if (*s.app) {
        rc = s.run();
        break;
      }
  } catch (const ConfigError& e) {
    std::cerr << "dlsim: error: " << e.what() << '\n';
    rc = kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    // A path the user gave that the file system refused (a file where a folder belongs, a name too long, no
    // permission): its path and the system's reason, not an internal error.
    std::cerr << "dlsim: error: " << path_error_text(e) << '\n';
    rc = kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "dlsim: internal error: " << e.what() << '\n';
    rc = 1;
  }
  // What was printed must have arrived: `dlsim run --json > /dev/full` is a failed write, not a success.
  if (const std::string problem = stdout_problem(); !problem.empty()) {
    std::cerr << "dlsim: error: <standard output>: cannot write: " << problem << '\n';
    return kExitBadInput;
  }
  return rc;
}
