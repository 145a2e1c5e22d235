#include "cli/sweep_command.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "experiment/experiment_graph.h"
#include "experiment/run_experiment.h"
#include "experiment/sweep/sweep.h"
#include "experiment/sweep/interrupt.h"
#include "experiment/sweep/mpi.h"
#include "experiment/sweep/runner.h"
#include "common/config_error.h"
#include "common/fatal_signal_cleanup.h"

namespace dlsim {

CLI::App* add_sweep_command(CLI::App& app, SweepCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("sweep", "run every point of a sweep file");
  cmd->add_option("SWEEP", o.sweep, "sweep file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--results-dir", o.results_dir, "where results/<name>/ goes")->capture_default_str();
  cmd->add_option("--max-points", o.max_points,
                  "most points the sweep may expand to (default: the file's max_points, else 100000)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--jobs,-j", o.jobs, "points run at once on threads (default: the core count)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--resume", o.resume, "skip the points whose rows are already in runs.csv");
  cmd->add_option("--shard", o.shard, "run shard I of N (I/N, 1 <= I <= N): every N-th point, into <name>/shard-I-of-N/");
  cmd->add_flag("--mpi", o.mpi, "spread the points over the ranks of `mpirun -np N dlsim sweep FILE --mpi`");
  cmd->add_option("--merge", o.merge, "join the runs.csv of these shard folders into <name>/ instead of running");
  return cmd;
}

namespace {

// The command line that goes on from where a stopped sweep stopped.
std::string resume_command(const SweepCommandOptions& o) {
  std::string c = "dlsim sweep " + o.sweep;
  if (o.results_dir != "results") c += " --results-dir " + o.results_dir;
  if (o.max_points) c += " --max-points " + std::to_string(o.max_points);
  if (o.jobs) c += " --jobs " + std::to_string(o.jobs);
  if (!o.shard.empty()) c += " --shard " + o.shard;
  return c + " --resume";
}

}  // namespace

int run_sweep_command(const SweepCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (o.mpi && !mpi_built()) throw ConfigError("<command line>", 0, "--mpi", mpi_not_built_message());
  if (o.mpi && (!o.shard.empty() || !o.merge.empty()))
    throw ConfigError("<command line>", 0, "--mpi", "runs the whole sweep: leave out --shard and --merge");
  if (o.mpi && o.jobs)
    throw ConfigError("<command line>", 0, "--jobs",
                      "with --mpi each rank runs one point at a time: start more ranks (mpirun -np N) instead");
  if (!o.merge.empty() && (o.resume || !o.shard.empty()))
    throw ConfigError("<command line>", 0, "--merge", "joins finished shards: leave out --resume and --shard");
  SweepOptions opt;
  opt.results_dir = o.results_dir;
  opt.resume = o.resume;
  if (!o.shard.empty()) opt.shard = parse_shard(o.shard);
  Sweep s = load_sweep(o.sweep, o.max_points);  // checks every point before anything runs
  if (!o.merge.empty()) return merge_sweep(s, o.merge, o.results_dir, out) ? 1 : 0;

  GraphCache graphs;  // each (model, batch, options) graph built once, shared by the threads
  const RunFn run = [&graphs](const Experiment& e) { return run_experiment(e, nullptr, &graphs, false); };
  if (o.mpi) return run_sweep_mpi(s, opt, run, out);

  opt.jobs = o.jobs ? o.jobs : core_count();
  opt.terminal = &out == &std::cout && ::isatty(STDOUT_FILENO);
  opt.resume_command = resume_command(o);
  StopOnSignal stop;
  opt.stop = &stop.requested();
  const SweepOutcome r = run_sweep(s, opt, run, out);
  if (r.stopped) {
    // Stopped by Ctrl-C or SIGTERM: dlsim ends as that signal ends a program, once the finished rows are written,
    // rather than with an exit code of its own, so that a shell loop or a job script around it stops too (its
    // shell reports 130 or 143). Its children and temporary folders go first (common/fatal_signal_cleanup.h).
    out.flush();
    std::cout.flush();
    std::cerr.flush();
    die_of_signal_after_cleanup(stop.signal());
  }
  return r.errors ? 1 : 0;
}

}  // namespace dlsim
