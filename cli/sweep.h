#pragma once
// `dlsim sweep`: the cartesian product of listed values over a base experiment, one simulator run per point,
// written to results/<name>/runs.csv (a row appended and flushed as each run finishes, so a sweep that dies
// keeps every finished row) and results/<name>/summary.md.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/run_experiment.h"
#include "cli/sweep_plots.h"

namespace dlsim {

struct SweepPoint {
  YAML::Node experiment;  // the merged mapping
  Experiment parsed;
};

struct Sweep {
  std::string file;
  std::string name;
  std::vector<std::string> varied_keys;  // in file order
  std::vector<SweepPoint> points;        // first varied key slowest
  std::vector<SweepPlot> plots;          // `plots:`, drawn after the runs (cli/sweep_plots.h)
};

// How many points a sweep may expand to unless its file (`max_points:`) or `dlsim sweep --max-points` says
// otherwise: every point is parsed and held before the first runs, and an accidental product of long lists
// (10^12 points) must be an error, not an out-of-memory kill.
inline constexpr uint64_t kDefaultMaxSweepPoints = 100000;

// max_points: the limit on the number of points; 0 = the file's `max_points`, else kDefaultMaxSweepPoints.
Sweep load_sweep(const std::string& path, uint64_t max_points = 0);
// Parses a sweep mapping (a whole file, or one embedded in a scenario) and every point it expands to; errors
// name `path`, the line and the key.
Sweep sweep_from_yaml(const YAML::Node& node, const std::string& path, uint64_t max_points = 0);

using RunFn = std::function<ExperimentResult(const Experiment&)>;

struct SweepOptions {
  std::string results_dir = "results";  // runs go to <results_dir>/<name>/
  bool quiet = false;
};

// Runs every point; a run that throws becomes a row with status "error" and its message, never the end of the
// sweep. Returns the number of rows with status "error".
int run_sweep(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log);

// The CSV header and one row (deterministic: no wall-clock figures).
std::string runs_csv_header();
std::string runs_csv_row(const ExperimentResult& r, const std::string& status, const std::string& error);

}  // namespace dlsim
