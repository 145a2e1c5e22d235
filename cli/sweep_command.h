#pragma once
// `dlsim sweep SWEEP.yaml [--results-dir DIR] [--max-points N] [--jobs N] [--resume] [--shard I/N] [--mpi]
//  [--merge DIR...]`: every point of a sweep file on the simulator, into DIR/<name>/runs.csv and summary.md
// (experiment/sweep/sweep.h). Exit 1 when a run failed; stopped by Ctrl-C or SIGTERM, it ends by that signal (resume with --resume). Shape:
// cli/run_command.h.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace dlsim {

struct SweepCommandOptions {
  std::string sweep;
  std::string results_dir = "results";
  uint64_t max_points = 0;  // 0: the file's max_points, else kDefaultMaxSweepPoints (experiment/sweep/sweep.h)
  int jobs = 0;             // 0: the core count
  bool resume = false;
  std::string shard;        // "I/N"; empty: every point
  bool mpi = false;
  std::vector<std::string> merge;  // shard folders to join instead of running
};

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& o);
int run_sweep_command(const SweepCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
