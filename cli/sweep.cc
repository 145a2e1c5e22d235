#include "cli/sweep.h"

#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"

namespace dlsim {

namespace {

// Each point gets its own copies: assigning a node of the sweep document into the point's mapping would merge
// yaml-cpp's memory pools, so every point kept the whole growing pool alive and each merge copied it (an
// 8,000-point sweep took minutes and gigabytes before its first run). Clone keeps the marks (lines) of `v`.
YAML::Node merged(const YAML::Node& base, const std::vector<std::pair<std::string, YAML::Node>>& overrides) {
  YAML::Node out = YAML::Clone(base);
  for (const auto& [k, v] : overrides) out[k] = YAML::Clone(v);
  return out;
}

std::string csv_escape(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

Sweep load_sweep(const std::string& path, uint64_t max_points) {
  return sweep_from_yaml(load_yaml_file(path), path, max_points);
}

Sweep sweep_from_yaml(const YAML::Node& node, const std::string& path, uint64_t max_points) {
  YamlMap m(node, path);
  m.check_keys({"name", "base", "vary", "max_points", "plots"});
  if (max_points == 0) {
    const int64_t v = m.get_int("max_points", static_cast<int64_t>(kDefaultMaxSweepPoints));
    if (v < 1) m.fail("max_points", "must be at least 1, got " + std::to_string(v));
    max_points = static_cast<uint64_t>(v);
  }
  Sweep s;
  s.file = path;
  s.name = m.get_string("name");
  if (s.name.empty() || s.name.find_first_of("/\\ ") != std::string::npos || s.name == "." || s.name == "..")
    m.fail("name", "must be a plain folder name (no slashes or spaces)");
  if (m.has("plots")) s.plots = sweep_plots_from_yaml(m.get("plots"), path);
  YAML::Node base = m.get("base");
  YamlMap base_map(base, path, "base");
  std::vector<std::pair<std::string, std::vector<YAML::Node>>> axes;
  if (m.has("vary")) {
    YamlMap vary = m.get_map("vary");
    for (auto it = vary.node().begin(); it != vary.node().end(); ++it) {
      const std::string key = it->first.Scalar();
      const auto& keys = experiment_keys();
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw ConfigError(path, yaml_line(it->first), "vary." + key, "unknown experiment key; valid keys: " + join(keys));
      if (!it->second.IsSequence() || it->second.size() == 0)
        throw ConfigError(path, yaml_line(it->second), "vary." + key, "expected a non-empty list of values");
      // Copy the list first: `it->second` lives in a temporary that a range-for would outlive.
      const YAML::Node list = it->second;
      std::vector<YAML::Node> values;
      for (const auto& v : list) values.push_back(v);
      axes.emplace_back(key, std::move(values));
      s.varied_keys.push_back(key);
    }
  }
  // The number of points is checked before any is built: each holds a parsed experiment, and a few long lists
  // multiply to more than memory holds (or than 2^64, hence the overflow-safe product).
  uint64_t points = 1;
  bool beyond = false;
  for (const auto& axis : axes) beyond = beyond || __builtin_mul_overflow(points, axis.second.size(), &points);
  if (beyond || points > max_points)
    m.fail("vary", "expands to " + (beyond ? std::string("more than 2^64") : std::to_string(points)) +
                       " points, above the limit of " + std::to_string(max_points) +
                       "; raise it with `max_points:` in the sweep file or `dlsim sweep --max-points N`");
  // Odometer over the axes, the last axis fastest.
  std::vector<size_t> idx(axes.size(), 0);
  while (true) {
    std::vector<std::pair<std::string, YAML::Node>> ov;
    for (size_t a = 0; a < axes.size(); ++a) ov.emplace_back(axes[a].first, axes[a].second[idx[a]]);
    SweepPoint p;
    p.experiment = merged(base, ov);
    try {
      p.parsed = experiment_from_yaml(p.experiment, path);  // every point is checked before anything runs
    } catch (const ConfigError& err) {
      // A varied key's error belongs to the value in `vary`, not to the base's line (or none) that the merged
      // mapping would give it.
      const std::string top = err.key().substr(0, err.key().find('.'));
      for (const auto& [key, value] : ov)
        if (key == top && yaml_line(value) > 0 && yaml_line(value) != err.line())
          throw ConfigError(path, yaml_line(value), err.key(), err.message());
      throw;
    }
    s.points.push_back(std::move(p));
    size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++idx[a] < axes[a].second.size()) break;
      idx[a] = 0;
      if (a == 0) return s;
    }
    if (axes.empty()) return s;
  }
}

std::string runs_csv_header() {
  return "model,batch,hw,pool,swap,concurrency,iterations,status,iteration_time_us,peak_live_bytes,"
         "peak_reserved_bytes,fragmentation,device_mallocs,device_frees,alloc_time_us,events,"
         "no_swap_iteration_time_us,no_swap_peak_live_bytes,overhead,swap_target_bytes,swap_limit_met,swap_out_bytes,"
         "swap_in_bytes,swap_transfers,copy_d2h_busy,copy_h2d_busy,swap_lower_bound_us,swap_planned_peak_bytes,"
         "ideal_iteration_us,error";
}

std::string runs_csv_row(const ExperimentResult& r, const std::string& status, const std::string& error) {
  const Experiment& e = r.experiment;
  std::ostringstream o;
  o << csv_escape(e.model) << ',' << e.batch << ',' << csv_escape(e.hw_label()) << ',' << csv_escape(e.pool.label()) << ','
    << csv_escape(e.swap.label()) << ',' << csv_escape(e.concurrency.label()) << ',' << e.iterations << ','
    << status << ',';
  if (status == "error") {
    o << ",,,,,,,,,,,,,,,,,,,,,";
  } else {
    o << fixed(r.iteration_time_us, 3) << ',' << r.peak_live_bytes << ',' << r.peak_reserved_bytes << ','
      << fixed(r.fragmentation(), 4) << ',' << r.device_mallocs << ',' << r.device_frees << ','
      << fixed(r.alloc_time_us, 3) << ',' << r.events << ',';
    const auto& w = r.swap;  // empty without swapping: empty cells
    auto num = [&](const char* k, int digits) {
      if (w.contains(k)) o << (w[k].is_number_float() ? fixed(w[k].get<double>(), digits) : w[k].dump());
      o << ',';
    };
    num("no_swap_iteration_time_us", 3);
    num("no_swap_peak_live_bytes", 0);
    num("overhead", 4);
    num("swap_target_bytes", 0);
    num("swap_limit_met", 0);
    num("swap_out_bytes", 0);
    num("swap_in_bytes", 0);
    num("swap_transfers", 0);
    num("copy_d2h_busy", 4);
    num("copy_h2d_busy", 4);
    num("swap_lower_bound_us", 3);
    num("swap_planned_peak_bytes", 0);
    o << fixed(r.ideal_iteration_us, 3) << ',';
  }
  o << csv_escape(status == "oom" ? r.oom_where : error);
  return o.str();
}

int run_sweep(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(opt.results_dir) / s.name;
  fs::create_directories(dir);
  std::ofstream csv(dir / "runs.csv", std::ios::trunc);
  if (!csv) throw ConfigError((dir / "runs.csv").string(), 0, "", "cannot write");
  csv << runs_csv_header() << '\n' << std::flush;

  std::ostringstream md;
  md << "# Sweep `" << s.name << "`\n\nFrom `" << s.file << "`: " << s.points.size()
     << " runs on the simulator. Memory in MiB; fragmentation = peak reserved / peak live - 1 "
        "(peak live is the lower bound for any pool).\n\n"
     << "| model | batch | hw | pool | swap | concurrency | status | iteration (ms) | peak live | peak reserved | "
        "fragmentation | cudaMalloc calls | allocator time (us) |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  int errors = 0;
  for (size_t i = 0; i < s.points.size(); ++i) {
    const Experiment& e = s.points[i].parsed;
    ExperimentResult r;
    r.experiment = e;
    std::string status = "ok", error;
    try {
      r = run(e);
      r.experiment = e;
      if (r.oom) status = "oom";
    } catch (const std::exception& ex) {
      status = "error";
      error = ex.what();
      ++errors;
    }
    csv << runs_csv_row(r, status, error) << '\n' << std::flush;
    if (!opt.quiet)
      log << "[" << (i + 1) << "/" << s.points.size() << "] " << e.model << " b" << e.batch << " " << e.hw_label() << " "
          << e.pool.label() << " " << e.swap.label() << " " << e.concurrency.label() << ": " << status
          << (status == "error" ? " (" + error + ")" : "") << '\n';
    md << "| " << e.model << " | " << e.batch << " | " << e.hw_label() << " | " << e.pool.label() << " | " << e.swap.label()
       << " | " << e.concurrency.label() << " | " << status << " | ";
    if (status == "error") {
      md << "| | | | | |\n";
    } else {
      md << fixed(r.iteration_time_us / 1000.0, 3) << " | " << mib(r.peak_live_bytes) << " | "
         << mib(r.peak_reserved_bytes) << " | " << fixed(r.fragmentation() * 100.0, 1) << "% | " << r.device_mallocs
         << " | " << fixed(r.alloc_time_us, 1) << " |\n";
    }
  }
  std::ofstream(dir / "summary.md", std::ios::trunc) << md.str();
  draw_sweep_plots(s.plots, dir, s.file);
  if (!opt.quiet) log << "wrote " << (dir / "runs.csv").string() << " and " << (dir / "summary.md").string() << '\n';
  return errors;
}

}  // namespace dlsim
