#include "experiment/sweep/plots.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/atomic_file.h"
#include "experiment/python_script.h"
#include "experiment/sweep/runs_csv_row.h"
#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"

namespace dlsim {

namespace {

std::vector<std::string> csv_columns() {
  std::vector<std::string> cols;
  std::string cur;
  for (char c : runs_csv_header()) {
    if (c == ',') {
      cols.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  cols.push_back(cur);
  return cols;
}

}  // namespace

std::vector<SweepPlot> sweep_plots_from_yaml(const YAML::Node& list, const std::string& path) {
  if (!list.IsSequence() || list.size() == 0)
    throw ConfigError(path, yaml_line(list), "plots", "expected a non-empty list of figures (each a mapping)");
  const std::vector<std::string> columns = csv_columns();
  std::vector<SweepPlot> out;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string where = "plots[" + std::to_string(i) + "]";
    if (!list[i].IsMap()) throw ConfigError(path, yaml_line(list[i]), where, "expected a mapping (name, x, y, ...)");
    YamlMap m(list[i], path, where);
    m.check_keys({"name", "x", "y", "hue", "hue_drop", "facet", "kind", "bound", "baseline", "where", "log_y", "title",
                  "caption"});
    SweepPlot p;
    p.line = m.line();
    p.name = m.get_string("name");
    if (p.name.empty() || p.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") !=
                              std::string::npos)
      m.fail("name", "must be a plain file name (letters, digits, '-', '_'), got '" + p.name + "'");
    for (const SweepPlot& q : out)
      if (q.name == p.name) m.fail("name", "'" + p.name + "' names two figures");
    FigureSpec& o = p.options;
    auto column = [&](const char* key, bool required) {
      if (!required && !m.has(key)) return std::string();
      const std::string c = m.get_string(key);
      if (std::find(columns.begin(), columns.end(), c) == columns.end())
        m.fail(key, "runs.csv has no column '" + c + "'; its columns: " + join(columns));
      return c;
    };
    o.x = column("x", true);
    o.y = column("y", true);
    o.hue = column("hue", false);
    o.facet = column("facet", false);
    o.bound = column("bound", false);
    o.kind = m.get_string("kind", "auto");
    const std::vector<std::string> kinds = {"auto", "bars", "lines", "pareto", "speedup"};
    if (std::find(kinds.begin(), kinds.end(), o.kind) == kinds.end())
      m.fail("kind", "unknown kind '" + o.kind + "'; valid: " + join(kinds));
    o.baseline = m.get_string("baseline", "");
    if (o.kind == "speedup" && (o.baseline.empty() || o.hue.empty()))
      m.fail("kind", "a speedup figure needs `hue` and `baseline` (the hue value the others are compared with)");
    if (m.has("where")) {
      const YAML::Node w = m.get("where");
      if (!w.IsSequence()) m.fail("where", "expected a list of KEY=VALUE");
      for (const auto& cond : w) {
        const std::string s = yaml_to_string(cond, path, where + ".where");
        const std::string key = s.substr(0, s.find('='));
        if (s.find('=') == std::string::npos)
          throw ConfigError(path, yaml_line(cond), where + ".where", "expected KEY=VALUE, got '" + s + "'");
        if (std::find(columns.begin(), columns.end(), key) == columns.end())
          throw ConfigError(path, yaml_line(cond), where + ".where",
                            "runs.csv has no column '" + key + "'; its columns: " + join(columns));
        o.where.push_back(s);
      }
    }
    if (m.has("hue_drop")) {
      const YAML::Node d = m.get("hue_drop");
      if (!d.IsSequence()) m.fail("hue_drop", "expected a list of parameter names");
      if (o.hue.empty()) m.fail("hue_drop", "needs `hue`");
      for (const auto& name : d) o.hue_drop.push_back(yaml_to_string(name, path, where + ".hue_drop"));
    }
    o.log_y = m.get_bool("log_y", false);
    o.title = m.get_string("title", "");  // one line: a plot's title
    p.caption = m.get_text("caption", "");
    out.push_back(std::move(p));
  }
  return out;
}

void draw_sweep_plots(const std::vector<SweepPlot>& plots, const std::filesystem::path& dir, const std::string& sweep_file) {
  if (plots.empty()) return;
  std::string md = "\n## Figures\n";
  for (const SweepPlot& p : plots) {
    FigureSpec o = p.options;
    o.csv = (dir / "runs.csv").string();
    o.out = {(dir / (p.name + ".png")).string(), (dir / (p.name + ".svg")).string()};
    const int rc = run_python_script("plot_runs.py", plot_script_args(o));
    if (rc != 0)
      throw ConfigError(sweep_file, p.line, "plots." + p.name,
                        "drawing the figure failed (figures/plot_runs.py exit " + std::to_string(rc) + ", its message above)");
    md += "\n![" + p.name + "](" + p.name + ".png)\n\n";
    md += (p.caption.empty() ? std::string() : p.caption + " ");
    md += "[" + p.name + ".png](" + p.name + ".png), [" + p.name + ".svg](" + p.name + ".svg)\n";
  }
  // Appended by rewriting the whole file (common/atomic_file.h): a failed write leaves summary.md as it was.
  const std::filesystem::path summary = dir / "summary.md";
  std::ifstream in(summary, std::ios::binary);
  std::stringstream text;
  if (in) text << in.rdbuf();
  write_file_atomically(summary.string(), text.str() + md);
}

}  // namespace dlsim
