#pragma once
// A sweep's figures: `plots:` in a sweep file lists them, and after the runs each is drawn from runs.csv by
// figures/plot_runs.py as <results>/<name>/<plot name>.png and .svg, linked from summary.md under "Figures".
//
//   plots:
//     - name: peak-reserved          # file name (plain: letters, digits, '-', '_')
//       x: model                     # runs.csv columns; checked when the sweep is loaded
//       y: peak_reserved_bytes
//       hue: pool                    # optional: series
//       hue_drop: [limit_fraction]   # optional: parameters left out of the hue labels (one series per policy)
//       facet: batch                 # optional: a panel per value
//       kind: bars                   # auto (default), bars, lines, pareto, speedup
//       bound: peak_live_bytes       # optional, bars: marked on each bar as a lower bound
//       baseline: cuda-malloc        # speedup: the hue value the others are compared with
//       where: [swap=none]           # optional: only rows where KEY=VALUE
//       log_y: true                  # optional
//       title: "..."                 # optional
//       caption: "..."               # optional: the sentence under the link in summary.md
#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiment/figure_spec.h"

namespace dlsim {

struct SweepPlot {
  std::string name;
  std::string caption;
  FigureSpec options;  // csv and out are filled when drawn
  int line = 0;                // of the entry in the sweep file, for errors
};

// Parses the `plots` list; errors name `path`, the line and the key (a column that runs.csv does not have lists
// the columns it has).
std::vector<SweepPlot> sweep_plots_from_yaml(const YAML::Node& list, const std::string& path);

// Draws every plot from <dir>/runs.csv into <dir>/<name>.png and .svg, then appends a "## Figures" section
// with a link to each to <dir>/summary.md. A figure that cannot be drawn is a ConfigError naming the sweep file
// and the plot (the script's own message is printed above it); summary.md then has no figure links.
void draw_sweep_plots(const std::vector<SweepPlot>& plots, const std::filesystem::path& dir, const std::string& sweep_file);

}  // namespace dlsim
