#pragma once
// `dlsim run EXPERIMENT.yaml [--json] [--chrome-trace FILE] [--memory-snapshot FILE.pickle]`: simulates one
// experiment and prints its figures (a table, or one JSON object); exit 3 when the simulated GPU ran out of memory.
// --memory-snapshot writes the run's allocation history as a PyTorch memory snapshot (experiment/snapshot/memory_snapshot.h).
//
// Every subcommand has this shape (cli/*_command.h): XCommandOptions, add_x_command registers it on the
// CLI11 app (the returned subcommand tells main whether it was chosen), run_x_command does the work and
// returns the exit code. Errors in the user's input are ConfigErrors; main prints them and exits 2.
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct RunCommandOptions {
  std::string experiment;
  bool json = false;
  std::string chrome_trace;  // write a Chrome/Perfetto trace of the run here ("" for none)
  std::string memory_snapshot;  // write a PyTorch memory snapshot (pickle) here ("" for none)
};

CLI::App* add_run_command(CLI::App& app, RunCommandOptions& o);
int run_run_command(const RunCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
