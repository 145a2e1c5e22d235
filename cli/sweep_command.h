#pragma once
// `dlsim sweep SWEEP.yaml [--results-dir DIR]`: every point of a sweep file on the simulator, into
// DIR/<name>/runs.csv and summary.md (cli/sweep.h). Exit 1 when a run failed. Shape: cli/run_command.h.
#include <iosfwd>
#include <string>

namespace CLI {
class App;
}

namespace dlsim {

struct SweepCommandOptions {
  std::string sweep;
  std::string results_dir = "results";
};

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& o);
int run_sweep_command(const SweepCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
