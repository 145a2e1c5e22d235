#include "cli/fit_command.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <ostream>

#include "experiment/batch_search.h"
#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("fit", "the largest batch that fits on the experiment's GPU under its policies");
  cmd->add_option("EXPERIMENT", o.experiment, "experiment file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o.json, "print one JSON object");
  cmd->add_option("--memory-at-overhead", o.overheads_percent,
                  "overheads in percent (e.g. 1,5,20): the least memory the swap policy reaches within each")
      ->delimiter(',');
  cmd->add_option("--max-batch", o.max_batch, "largest batch tried")->check(CLI::Range(int64_t{1}, int64_t{1} << 24))->capture_default_str();
  return cmd;
}

int run_fit_command(const FitCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  std::vector<double> bounds;
  for (double p : o.overheads_percent) {
    // Checked here, not with CLI::Range: a range check lets nan through (every comparison with it is false),
    // and a NaN bound then matched no run without a word.
    if (!std::isfinite(p) || p < 0 || p > 1000)
      throw ConfigError("<command line>", 0, "--memory-at-overhead", "expected percentages in [0, 1000], got " + fixed(p, 1));
    bounds.push_back(p / 100.0);
  }
  const Experiment e = load_experiment(o.experiment);
  const RunFn run = [](const Experiment& x) { return run_experiment(x, nullptr, nullptr, false); };
  std::vector<MemoryAtOverhead> m;
  if (!bounds.empty()) m = memory_at_overhead(e, bounds, run);
  const FitResult f = find_max_batch(e, run, o.max_batch);
  if (o.json) {
    out << to_json(f, m).dump(2) << '\n';
    return f.max_batch > 0 ? 0 : 3;
  }
  out << "experiment        " << o.experiment << " (" << e.model << " on " << e.hw_label() << ", pool " << e.pool.label()
      << ", swap " << e.swap.label() << ")\n";
  if (f.max_batch == 0) {
    out << "largest batch     none: batch 1 runs out of memory\n";
    return 3;
  }
  out << "largest batch     " << f.max_batch << (f.max_batch >= o.max_batch ? " (the --max-batch cap)" : "") << '\n'
      << "iteration time    " << fixed(f.at_max.iteration_time_us / 1000.0, 3) << " ms there\n"
      << "peak reserved     " << mib(f.at_max.peak_reserved_bytes) << " MiB (live " << mib(f.at_max.peak_live_bytes) << " MiB)\n";
  for (const MemoryAtOverhead& x : m) {
    out << "within " << fixed(x.max_overhead * 100.0, 1) << "% overhead: ";
    if (!x.found) out << "no limit tried reaches it\n";
    else
      out << mib(x.peak_live_bytes) << " MiB live, " << mib(x.peak_reserved_bytes) << " MiB reserved (limit_fraction "
          << fixed(x.limit_fraction, 2) << ", overhead " << fixed(x.overhead * 100.0, 1) << "%) at batch " << e.batch << '\n';
  }
  return 0;
}

}  // namespace dlsim
