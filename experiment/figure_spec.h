#pragma once
// One figure drawn from a sweep's runs.csv by figures/plot_runs.py (matplotlib, through experiment/python_script.h):
// what `dlsim plot` takes on its command line and a sweep's `plots:` entries hold.
#include <string>
#include <vector>

namespace dlsim {

struct FigureSpec {
  std::string csv;
  std::string x, y, hue, facet;
  std::string kind = "auto";
  std::string bound, baseline, title;
  std::vector<std::string> where;
  std::vector<std::string> hue_drop;  // parameters left out of the hue labels
  bool log_y = false;
  std::vector<std::string> out;
};

// The arguments figures/plot_runs.py gets for these options (shared with a sweep's `plots:`).
std::vector<std::string> plot_script_args(const FigureSpec& o);

}  // namespace dlsim
