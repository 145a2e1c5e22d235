#include "cli/plot_command.h"

#include <CLI/CLI.hpp>

#include <ostream>

#include "experiment/python_script.h"

namespace dlsim {

CLI::App* add_plot_command(CLI::App& app, PlotCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("plot", "draw a figure (PNG or SVG) from a sweep's runs.csv");
  cmd->add_option("RUNS_CSV", o.csv, "runs.csv of a sweep")->required()->check(CLI::ExistingFile);
  cmd->add_option("--x", o.x, "column along the x axis (or the groups of bars)")->required();
  cmd->add_option("--y", o.y, "column drawn (a number: bytes are drawn in MiB, us in ms)")->required();
  cmd->add_option("--hue", o.hue, "column whose values are the series (one colour each)");
  cmd->add_option("--hue-drop", o.hue_drop,
                  "PARAM: leave PARAM=value out of the hue labels, so one policy at several values is one series "
                  "(repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--facet", o.facet, "column whose values get a panel each");
  cmd->add_option("--kind", o.kind, "bars, lines, pareto, speedup, or auto (lines when x is numeric)")
      ->check(CLI::IsMember({"auto", "bars", "lines", "pareto", "speedup"}));
  cmd->add_option("--bound", o.bound, "bars: column marked on each bar as its lower bound (peak_live_bytes)");
  cmd->add_option("--baseline", o.baseline, "speedup: the --hue value the others are compared with");
  cmd->add_option("--where", o.where, "KEY=VALUE: draw only the rows where column KEY holds VALUE (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--log-y", o.log_y, "logarithmic y axis");
  cmd->add_option("--title", o.title, "the figure's title (default: what it shows)");
  cmd->add_option("--out", o.out, "the figure: FIG.png or FIG.svg (repeatable)")
      ->required()
      ->allow_extra_args(false);  // one value per --out: a later positional is not taken for a figure
  return cmd;
}

int run_plot_command(const PlotCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  const int rc = run_python_script("plot_runs.py", plot_script_args(o));
  if (rc == 0)
    for (const std::string& f : o.out) out << "wrote " << f << '\n';
  return rc;
}

}  // namespace dlsim
