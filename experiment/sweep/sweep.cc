#include "experiment/sweep/sweep.h"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <optional>
#include <ostream>
#include <sstream>

#include "experiment/sweep/csv_line.h"
#include "experiment/sweep/runs_csv_file.h"
#include "experiment/sweep/progress.h"
#include "experiment/sweep/resume.h"
#include "experiment/sweep/runner.h"
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

PointRow run_point(const Experiment& e, const RunFn& run) {
  ExperimentResult r;
  r.experiment = e;
  PointRow row;
  row.status = "ok";
  try {
    r = run(e);
    r.experiment = e;
    if (r.oom) row.status = "oom";
  } catch (const std::exception& ex) {
    row.status = "error";
    row.error = ex.what();
  }
  row.line = runs_csv_row(r, row.status, row.error);
  return row;
}

PointExecutor thread_executor(const Sweep& s, const RunFn& run, int jobs, const std::atomic<bool>* stop) {
  return [&s, run, jobs, stop](const std::vector<size_t>& todo, const RowSink& sink) {
    run_on_threads(todo.size(), jobs, [&](size_t k) { sink(todo[k], run_point(s.points[todo[k]].parsed, run)); }, stop);
  };
}

namespace {

std::string describe(const Experiment& e) {
  std::string d = e.model;
  d += " b" + std::to_string(e.batch) + " " + e.hw_label() + " " + e.pool.label() + " " + e.swap.label() + " " +
       e.concurrency.label();
  return d;
}

std::string ordered_csv(const std::vector<std::string>& rows) {
  std::string text = runs_csv_header();
  text += '\n';
  for (const auto& r : rows) {
    text += r;
    text += '\n';
  }
  return text;
}

int error_rows(const std::vector<std::string>& rows) {
  const size_t status = runs_csv_key_columns();
  std::vector<std::string> f;
  int errors = 0;
  for (const auto& r : rows) errors += split_csv_line(r, f) && f.size() > status && f[status] == "error";
  return errors;
}

}  // namespace

std::string sweep_results_dir(const Sweep& s, const SweepOptions& opt) {
  std::filesystem::path dir = std::filesystem::path(opt.results_dir) / s.name;
  if (opt.shard.count > 1) dir /= opt.shard.folder();
  return dir.string();
}

SweepOutcome run_sweep(const Sweep& s, const SweepOptions& opt, const RunFn& run, std::ostream& log) {
  return run_sweep(s, opt, thread_executor(s, run, opt.jobs, opt.stop), log);
}

SweepOutcome run_sweep(const Sweep& s, const SweepOptions& opt, const PointExecutor& execute, std::ostream& log) {
  namespace fs = std::filesystem;
  const fs::path dir = sweep_results_dir(s, opt);
  const std::string csv_path = (dir / "runs.csv").string();
  SweepOutcome out;

  // This process's points, and the key of each (empty: another shard's).
  std::vector<std::string> wanted(s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i)
    if (opt.shard.owns(i)) {
      wanted[i] = runs_csv_key(s.points[i].parsed);
      ++out.points;
    }

  std::vector<std::optional<std::string>> rows(s.points.size());
  std::optional<RunsCsvFile> file;
  if (opt.resume && fs::exists(csv_path)) {
    // Read and matched before anything is written: a foreign or unreadable file is an error and stays untouched.
    const RunsCsvRows found = read_runs_csv(csv_path, runs_csv_header());
    rows = match_rows({found}, wanted, runs_csv_key_columns());
    file.emplace(RunsCsvFile::append_to(csv_path, found.intact_bytes));
    for (const auto& r : rows) out.resumed += r.has_value();
    if (!opt.quiet)
      log << "resuming " << csv_path << ": " << out.resumed << " of " << out.points << " points done"
          << (found.torn_last_line ? " (a torn last line dropped)" : "") << '\n';
  } else {
    if (opt.resume && !opt.quiet) log << "nothing to resume in " << csv_path << ": starting the sweep\n";
    fs::create_directories(dir);
    file.emplace(RunsCsvFile::create(csv_path, runs_csv_header()));
  }

  std::vector<size_t> todo;
  for (size_t i = 0; i < s.points.size(); ++i)
    if (!wanted[i].empty() && !rows[i]) todo.push_back(i);

  SweepProgress progress(log, opt.quiet ? SweepProgress::Style::Quiet
                              : opt.terminal ? SweepProgress::Style::Terminal
                                             : SweepProgress::Style::Lines,
                         out.points, out.resumed);
  std::mutex rows_mutex;
  execute(todo, [&](size_t point, PointRow row) {
    file->append(row.line);  // first on disk: a kill after this line loses nothing
    {
      const std::lock_guard<std::mutex> lock(rows_mutex);
      rows[point] = row.line;
      ++out.ran;
    }
    progress.finished(describe(s.points[point].parsed),
                      row.status == "error" ? "error (" + row.error + ")" : row.status, row.status == "error");
  });
  progress.close();
  file.reset();

  std::vector<std::string> ordered;
  for (size_t i = 0; i < s.points.size(); ++i)
    if (rows[i]) ordered.push_back(*rows[i]);
  write_file_atomically(csv_path, ordered_csv(ordered));
  out.errors = error_rows(ordered);
  out.stopped = ordered.size() < out.points;
  if (out.stopped) {
    log << "stopped: " << ordered.size() << " of " << out.points << " points done, their rows in " << csv_path << '\n';
    if (!opt.resume_command.empty()) log << "to finish the sweep: " << opt.resume_command << '\n';
    return out;
  }
  write_file_atomically((dir / "summary.md").string(), sweep_summary(s, ordered));
  draw_sweep_plots(s.plots, dir, s.file);  // figures beside summary.md, linked from it
  if (!opt.quiet) log << "wrote " << csv_path << " and " << (dir / "summary.md").string() << '\n';
  return out;
}

int merge_sweep(const Sweep& s, const std::vector<std::string>& inputs, const std::string& results_dir, std::ostream& log) {
  namespace fs = std::filesystem;
  std::vector<RunsCsvRows> files;
  for (const auto& in : inputs) {
    const std::string path = fs::is_directory(in) ? (fs::path(in) / "runs.csv").string() : in;
    files.push_back(read_runs_csv(path, runs_csv_header()));
    if (files.back().torn_last_line)
      throw ConfigError(path, 0, "", "its last line is torn (the shard was killed): finish it with --resume first");
  }
  std::vector<std::string> wanted;
  for (const auto& p : s.points) wanted.push_back(runs_csv_key(p.parsed));
  const auto rows = match_rows(files, wanted, runs_csv_key_columns());
  std::vector<std::string> ordered;
  size_t missing = 0;
  std::string first_missing;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i]) {
      ordered.push_back(*rows[i]);
    } else if (missing++ == 0) {
      first_missing = describe(s.points[i].parsed);
    }
  }
  if (missing)
    throw ConfigError(s.file, 0, "", std::to_string(missing) + " of " + std::to_string(s.points.size()) +
                                         " points have no row in the merged files (the first: " + first_missing +
                                         "); merge every shard, finishing unfinished ones with --resume");
  const fs::path dir = fs::path(results_dir) / s.name;
  fs::create_directories(dir);
  write_file_atomically((dir / "runs.csv").string(), ordered_csv(ordered));
  write_file_atomically((dir / "summary.md").string(), sweep_summary(s, ordered));
  draw_sweep_plots(s.plots, dir, s.file);
  log << "merged " << files.size() << " files, " << ordered.size() << " rows: wrote " << (dir / "runs.csv").string()
      << " and " << (dir / "summary.md").string() << '\n';
  return error_rows(ordered);
}

std::string sweep_summary(const Sweep& s, const std::vector<std::string>& rows) {
  std::vector<std::string> names;
  split_csv_line(runs_csv_header(), names);
  auto column = [&](const char* name) {
    return static_cast<size_t>(std::find(names.begin(), names.end(), name) - names.begin());
  };
  const size_t model = column("model"), batch = column("batch"), hw = column("hw"), pool = column("pool"),
               swap = column("swap"), concurrency = column("concurrency"), status = column("status"),
               iteration = column("iteration_time_us"), live = column("peak_live_bytes"),
               reserved = column("peak_reserved_bytes"), mallocs = column("device_mallocs"),
               alloc = column("alloc_time_us"), excess = column("reserved_excess");
  std::ostringstream md;
  md << "# Sweep `" << s.name << "`\n\nFrom `" << s.file << "`: " << rows.size()
     << " runs on the simulator. Memory in MiB; peak live is the lower bound for any pool. *Beyond live*: for a "
        "pool that grows on demand, its fragmentation, peak reserved / peak live - 1; for a pool that reserved its "
        "memory up front by its configuration (cnmem's cnmemInit region, tf-bfc without allow_growth) and never held "
        "more, \"reserved up front\": that excess is the reservation, not fragmentation.\n\n"
     << "| model | batch | hw | pool | swap | concurrency | status | iteration (ms) | peak live | peak reserved | "
        "beyond live | cudaMalloc calls | allocator time (us) |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
  std::vector<std::string> f;
  for (const auto& row : rows) {
    split_csv_line(row, f);
    md << "| " << f[model] << " | " << f[batch] << " | " << f[hw] << " | " << f[pool] << " | " << f[swap] << " | "
       << f[concurrency] << " | " << f[status] << " | ";
    if (f[status] == "error") {
      md << "| | | | | |\n";
      continue;
    }
    // From the row's own figures, so that a resumed or merged sweep's summary is the same as an uninterrupted one.
    const uint64_t live_bytes = std::stoull(f[live]), reserved_bytes = std::stoull(f[reserved]);
    const double fragmentation =
        live_bytes ? static_cast<double>(reserved_bytes) / static_cast<double>(live_bytes) - 1.0 : 0.0;
    md << fixed(std::stod(f[iteration]) / 1000.0, 3) << " | " << mib(live_bytes) << " | " << mib(reserved_bytes) << " | "
       << (f[excess] == "reserved up front" ? std::string("reserved up front") : fixed(fragmentation * 100.0, 1) + "%")
       << " | " << f[mallocs] << " | " << fixed(std::stod(f[alloc]), 1) << " |\n";
  }
  return md.str();
}

}  // namespace dlsim
