#pragma once
// `dlsim plot RUNS.csv --x KEY --y METRIC [--hue KEY] [--hue-drop PARAM]... [--facet KEY] [--kind K] [--bound METRIC]
// [--baseline VALUE] [--where KEY=VALUE]... [--log-y] [--title T] --out FIG.png|FIG.svg [--out ...]`: one figure
// from a sweep's runs.csv, drawn by figures/plot_runs.py with matplotlib (experiment/python_script.h finds it). Kinds:
// grouped bars (with --bound marking a lower bound on each bar), lines, Pareto fronts, speed-up bars.
// Exit 0 drawn, 2 bad input (a column that does not exist: the message lists the columns), 3 matplotlib missing.
#include <iosfwd>
#include <string>
#include <vector>

#include "experiment/figure_spec.h"

namespace CLI {
class App;
}

namespace dlsim {

// The command's options are the figure's specification (experiment/figure_spec.h).
using PlotCommandOptions = FigureSpec;

CLI::App* add_plot_command(CLI::App& app, PlotCommandOptions& o);
int run_plot_command(const PlotCommandOptions& o, std::ostream& out, std::ostream& err);

}  // namespace dlsim
