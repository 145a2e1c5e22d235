#pragma once
// `dlsim sweep`: the cartesian product of listed values over a base experiment (or the union of several such
// products, `vary` given as a list of mappings), one simulator run per point,
// written to results/<name>/runs.csv (a row appended as each run finishes, so a sweep that dies keeps every
// finished row; at the end the rows in the sweep's order) and results/<name>/summary.md. Points run on threads
// (--jobs), in shards (--shard) or on MPI ranks (--mpi, experiment/sweep/mpi.h); --resume skips finished points.
#include <atomic>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/run_experiment.h"
#include "experiment/sweep/plots.h"
#include "experiment/sweep/runs_csv_row.h"
#include "experiment/sweep/shard.h"

namespace dlsim {

struct SweepPoint {
  YAML::Node experiment;  // the merged mapping
  Experiment parsed;
  std::string baseline_key;  // runs_csv_key of the point summary.md compares this one with; empty: no `baseline:`
};

struct Sweep {
  std::string file;
  std::string name;
  std::vector<std::string> varied_keys;  // in file order (of every `vary` mapping, each key once)
  std::vector<SweepPoint> points;        // `vary` mapping by mapping; in each, first varied key slowest
  std::string baseline;                  // `baseline:` in flow style, for summary.md; empty when there is none
  std::vector<SweepPlot> plots;          // `plots:`, drawn after the runs (experiment/sweep/plots.h)
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

// One point's finished row of runs.csv.
struct PointRow {
  std::string line;    // runs_csv_row, no line break
  std::string status;  // ok, oom or error
  std::string error;   // an error row's message
};
// Runs `e` and formats its row; a run that throws becomes a row with status "error" and its message.
PointRow run_point(const Experiment& e, const RunFn& run);

// Hands each finished row to the sweep; may be called from several threads at once.
using RowSink = std::function<void(size_t point, PointRow row)>;
// Runs the points `todo` (indices into Sweep::points) and hands every finished row to `sink`: threads in this
// process (thread_executor) or ranks of an MPI job (experiment/sweep/mpi.h).
using PointExecutor = std::function<void(const std::vector<size_t>& todo, const RowSink& sink)>;
// `jobs` threads, each taking the next point when free; *stop set: no further point starts. `run` is called
// from several threads at once.
PointExecutor thread_executor(const Sweep& s, const RunFn& run, int jobs, const std::atomic<bool>* stop = nullptr);

struct SweepOptions {
  std::string results_dir = "results";  // runs go to <results_dir>/<name>/ (a shard's to .../<name>/shard-I-of-N/)
  bool quiet = false;
  bool terminal = false;  // progress on one line rewritten in place, else a line per finished point
  int jobs = 1;           // threads (thread_executor)
  bool resume = false;    // skip the points whose rows are in runs.csv already (experiment/sweep/resume.h)
  Shard shard;            // run only this shard's points (experiment/sweep/shard.h)
  const std::atomic<bool>* stop = nullptr;  // set (Ctrl-C): start no further point
  std::string resume_command;  // printed when stopped early: how to go on
};

struct SweepOutcome {
  size_t points = 0;   // this process's points (its shard's)
  size_t resumed = 0;  // of them, found finished in runs.csv
  size_t ran = 0;      // run now
  int errors = 0;      // rows with status "error" in the final runs.csv
  bool stopped = false;  // stopped early (a signal): runs.csv holds the finished rows, summary.md is not written
};

// Runs the sweep's (shard's) points, writing each row to runs.csv as it finishes (one write per complete line,
// experiment/sweep/runs_csv_file.h), then replaces runs.csv by the same rows in the sweep's order, byte for byte the same for
// any number of threads or ranks, and writes summary.md from it.
SweepOutcome run_sweep(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log);
SweepOutcome run_sweep(const Sweep& s, const SweepOptions& opt, const PointExecutor& execute, std::ostream& log);

// The folder a sweep (or its shard) writes to.
std::string sweep_results_dir(const Sweep& s, const SweepOptions& opt);

// `dlsim sweep FILE --merge DIR...`: the runs.csv of several shards (each DIR holds one, or is one) joined into
// <results_dir>/<name>/runs.csv and summary.md, in the sweep's order. Every point must have exactly one row; a
// missing, repeated or foreign row is a ConfigError. Returns the number of error rows.
int merge_sweep(const Sweep& s, const std::vector<std::string>& inputs, const std::string& results_dir, std::ostream& log);

// summary.md from the rows of runs.csv (sweep order).
std::string sweep_summary(const Sweep& s, const std::vector<std::string>& rows);

}  // namespace dlsim
