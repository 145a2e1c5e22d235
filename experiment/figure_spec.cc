#include "experiment/figure_spec.h"

#include "experiment/python_script.h"

namespace dlsim {

std::vector<std::string> plot_script_args(const FigureSpec& o) {
  // Values joined to their flag and the CSV as an operand, so that no text the user gave (a title, a file name
  // starting with '-') is read by the script as an option.
  std::vector<std::string> a = {as_operand(o.csv), "--x=" + o.x, "--y=" + o.y, "--kind=" + o.kind};
  auto opt = [&](const char* flag, const std::string& v) {
    if (!v.empty()) a.push_back(std::string(flag) + "=" + v);
  };
  opt("--hue", o.hue);
  opt("--facet", o.facet);
  opt("--bound", o.bound);
  opt("--baseline", o.baseline);
  opt("--title", o.title);
  for (const std::string& w : o.where) opt("--where", w);
  for (const std::string& d : o.hue_drop) opt("--hue-drop", d);
  if (o.log_y) a.emplace_back("--log-y");
  for (const std::string& f : o.out) opt("--out", f);
  return a;
}

}  // namespace dlsim
