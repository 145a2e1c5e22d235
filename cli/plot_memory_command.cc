#include "cli/plot_memory_command.h"

#include <CLI/CLI.hpp>

#include <optional>
#include <ostream>

#include "experiment/experiment.h"
#include "experiment/snapshot/memory_snapshot.h"
#include "experiment/python_script.h"
#include "experiment/run_experiment.h"
#include "common/strings.h"
#include "common/temp_dir.h"

namespace dlsim {

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

CLI::App* add_plot_memory_command(CLI::App& app, PlotMemoryCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("plot-memory", "draw a run's live and reserved memory over time, by tensor kind");
  cmd->add_option("INPUT", o.input, "an experiment (YAML, simulated first) or a memory snapshot (.pickle)")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--out", o.out, "the figure: FIG.png or FIG.svg (repeatable)")
      ->required()
      ->allow_extra_args(false);  // one value per --out: a later positional is not taken for a figure
  cmd->add_option("--title", o.title, "the figure's title (default: the experiment)");
  return cmd;
}

int run_plot_memory_command(const PlotMemoryCommandOptions& o, std::ostream& out, std::ostream& err) {
  std::string snapshot = o.input;
  std::string title = o.title;
  std::optional<TempDir> temp;  // the snapshot of a simulated run: removed however the drawing ends, a signal included
  if (!ends_with(o.input, ".pickle")) {
    const Experiment e = load_experiment(o.input);
    RunArtifacts artifacts;
    const ExperimentResult r = run_experiment(e, &artifacts);
    for (const std::string& w : r.warnings) err << "dlsim: warning: " << w << '\n';
    temp.emplace("dlsim-plot-memory");
    snapshot = (temp->path() / "snapshot.pickle").string();
    write_memory_snapshot(snapshot, artifacts, artifacts.iterations);
    if (title.empty())
      title = e.model + " batch " + std::to_string(e.batch) + " on " + e.hw_label() + ", pool " + e.pool.label() +
              (e.swap.label() == "none" ? std::string() : ", swap " + e.swap.label()) + " (dlsim, " +
              std::to_string(e.iterations) + (e.iterations == 1 ? " iteration" : " iterations") + (r.oom ? ", out of memory" : "") + ")";
  }
  // Values joined to their flag and the snapshot as an operand: no text the user gave is read as an option.
  std::vector<std::string> args = {as_operand(snapshot)};
  if (!title.empty()) args.push_back("--title=" + title);
  for (const std::string& f : o.out) args.push_back("--out=" + f);
  const int rc = run_python_script("plot_memory.py", args);
  if (rc == 0)
    for (const std::string& f : o.out) out << "wrote " << f << '\n';
  return rc;
}

}  // namespace dlsim
