#include "experiment/sweep/sweep.h"

#include <algorithm>
#include <filesystem>
#include <map>
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

namespace {

// One `vary` mapping: its keys in file order, each with its list of values.
using Axes = std::vector<std::pair<std::string, std::vector<YAML::Node>>>;

Axes read_axes(const YAML::Node& vary, const std::string& path, const std::string& context) {
  Axes axes;
  for (auto it = vary.begin(); it != vary.end(); ++it) {
    const std::string key = yaml_key(it->first, path, context);
    const auto& keys = experiment_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw ConfigError(path, yaml_line(it->first), context + "." + key, "unknown experiment key; valid keys: " + join(keys));
    if (!it->second.IsSequence() || it->second.size() == 0)
      throw ConfigError(path, yaml_line(it->second), context + "." + key, "expected a non-empty list of values");
    // Copy the list first: `it->second` lives in a temporary that a range-for would outlive.
    const YAML::Node list = it->second;
    std::vector<YAML::Node> values;
    for (const auto& v : list) values.push_back(v);
    axes.emplace_back(key, std::move(values));
  }
  return axes;
}

// Parses `node` as an experiment; an error in a key that `overrides` set belongs to that value's line, not to
// the base's line (or none) that the merged mapping would give it.
Experiment parse_point(const YAML::Node& node, const std::vector<std::pair<std::string, YAML::Node>>& overrides,
                       const std::string& path) {
  try {
    return experiment_from_yaml(node, path);
  } catch (const ConfigError& err) {
    const std::string top = err.key().substr(0, err.key().find('.'));
    for (const auto& [key, value] : overrides)
      if (key == top && yaml_line(value) > 0 && yaml_line(value) != err.line())
        throw ConfigError(path, yaml_line(value), err.key(), err.message());
    throw;
  }
}

// Appends the cartesian product of `axes` over `base` (the last axis fastest), every point checked.
void add_points(const YAML::Node& base, const Axes& axes, const std::string& path, Sweep& s) {
  std::vector<size_t> idx(axes.size(), 0);
  while (true) {
    std::vector<std::pair<std::string, YAML::Node>> ov;
    for (size_t a = 0; a < axes.size(); ++a) ov.emplace_back(axes[a].first, axes[a].second[idx[a]]);
    SweepPoint p;
    p.experiment = merged(base, ov);
    p.parsed = parse_point(p.experiment, ov, path);  // every point is checked before anything runs
    s.points.push_back(std::move(p));
    size_t a = axes.size();
    while (a > 0) {
      --a;
      if (++idx[a] < axes[a].second.size()) break;
      idx[a] = 0;
      if (a == 0) return;
    }
    if (axes.empty()) return;
  }
}

std::string describe(const Experiment& e);  // below

// `baseline:`: each point's baseline is the point itself with these keys set, and must be a point of the sweep.
void set_baselines(const YamlMap& m, Sweep& s) {
  const YAML::Node node = m.get("baseline");
  if (!node.IsMap() || node.size() == 0)
    m.fail("baseline", "expected a mapping of experiment keys to the values each run is compared with");
  std::vector<std::pair<std::string, YAML::Node>> values;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const std::string key = yaml_key(it->first, s.file, "baseline");
    const auto& keys = experiment_keys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw ConfigError(s.file, yaml_line(it->first), "baseline." + key, "unknown experiment key; valid keys: " + join(keys));
    values.emplace_back(key, it->second);
  }
  YAML::Emitter flow;
  flow.SetMapFormat(YAML::Flow);
  flow.SetSeqFormat(YAML::Flow);
  flow << node;
  s.baseline = flow.c_str();
  std::map<std::string, size_t> point_of;
  for (size_t i = 0; i < s.points.size(); ++i) point_of.emplace(runs_csv_key(s.points[i].parsed), i);
  for (SweepPoint& p : s.points) {
    const Experiment b = parse_point(merged(p.experiment, values), values, s.file);
    p.baseline_key = runs_csv_key(b);
    if (!point_of.count(p.baseline_key))
      m.fail("baseline", "the baseline of " + describe(p.parsed) + " would be " + describe(b) +
                             ", which is no point of the sweep: add it to `vary`, or drop `baseline`");
  }
}

}  // namespace

Sweep sweep_from_yaml(const YAML::Node& node, const std::string& path, uint64_t max_points) {
  YamlMap m(node, path);
  m.check_keys({"name", "base", "vary", "baseline", "max_points", "plots"});
  if (max_points == 0) {
    const int64_t v = m.get_int("max_points", static_cast<int64_t>(kDefaultMaxSweepPoints));
    if (v < 1) m.fail("max_points", "must be at least 1, got " + std::to_string(v));
    max_points = static_cast<uint64_t>(v);
  }
  Sweep s;
  s.file = path;
  s.name = m.get_string("name");
  // The name is the results folder's and appears in every report: a plain folder name, the same on every system.
  if (s.name.empty() || s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") !=
                            std::string::npos || s.name.find_first_not_of('.') == std::string::npos)
    m.fail("name", "must be a plain folder name (letters, digits, '-', '_', '.'; not only dots), got '" + s.name + "'");
  if (m.has("plots")) s.plots = sweep_plots_from_yaml(m.get("plots"), path);
  YAML::Node base = m.get("base");
  YamlMap base_map(base, path, "base");
  // `vary`: one mapping (one cartesian product), or a list of mappings (the union of their products, in order).
  std::vector<Axes> groups;
  if (m.has("vary")) {
    const YAML::Node vary = m.get("vary");
    if (vary.IsSequence()) {
      if (vary.size() == 0) m.fail("vary", "expected a mapping, or a non-empty list of mappings");
      for (size_t g = 0; g < vary.size(); ++g) {
        const std::string context = "vary[" + std::to_string(g) + "]";
        if (!vary[g].IsMap()) throw ConfigError(path, yaml_line(vary[g]), context, "expected a mapping of keys to lists");
        groups.push_back(read_axes(vary[g], path, context));
      }
    } else {
      groups.push_back(read_axes(m.get_map("vary").node(), path, "vary"));
    }
  } else {
    groups.emplace_back();  // the base alone
  }
  for (const Axes& axes : groups)
    for (const auto& axis : axes)
      if (std::find(s.varied_keys.begin(), s.varied_keys.end(), axis.first) == s.varied_keys.end())
        s.varied_keys.push_back(axis.first);
  // The number of points is checked before any is built: each holds a parsed experiment, and a few long lists
  // multiply to more than memory holds (or than 2^64, hence the overflow-safe product and sum).
  uint64_t points = 0;
  bool beyond = false;
  for (const Axes& axes : groups) {
    uint64_t product = 1;
    for (const auto& axis : axes) beyond = beyond || __builtin_mul_overflow(product, axis.second.size(), &product);
    beyond = beyond || __builtin_add_overflow(points, product, &points);
  }
  if (beyond || points > max_points)
    m.fail("vary", "expands to " + (beyond ? std::string("more than 2^64") : std::to_string(points)) +
                       " points, above the limit of " + std::to_string(max_points) +
                       "; raise it with `max_points:` in the sweep file or `dlsim sweep --max-points N`");
  for (const Axes& axes : groups) add_points(base, axes, path, s);
  if (m.has("baseline")) set_baselines(m, s);
  return s;
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

PointKeys point_keys(const SweepPoint& p) {
  PointKeys k;
  k.key = runs_csv_key(p.parsed);
  k.legacy = runs_csv_legacy_key(p.parsed, k.legacy_exact);
  return k;
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

  // This process's points, and the keys of each (empty: another shard's).
  std::vector<PointKeys> wanted(s.points.size());
  for (size_t i = 0; i < s.points.size(); ++i)
    if (opt.shard.owns(i)) {
      wanted[i] = point_keys(s.points[i]);
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
    if (!wanted[i].key.empty() && !rows[i]) todo.push_back(i);

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
    const fs::path path = fs::is_directory(in) ? fs::path(in) / "runs.csv" : fs::path(in);
    files.push_back(read_runs_csv(path.string(), runs_csv_header()));
    if (files.back().torn_last_line)
      throw ConfigError(path.string(), 0, "", "its last line is torn (the shard was killed): finish it with --resume first");
    files.back().shard = shard_of_folder(path.parent_path().string());
  }
  // In shard order (shard-2 before shard-10, whatever order a shell's glob gave): the rows are placed by point
  // whatever the order, but errors and the log then follow the shards.
  std::stable_sort(files.begin(), files.end(), [](const RunsCsvRows& a, const RunsCsvRows& b) {
    return (a.shard ? a.shard->index : 0) < (b.shard ? b.shard->index : 0);
  });
  std::vector<PointKeys> wanted;
  for (const auto& p : s.points) wanted.push_back(point_keys(p));
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

namespace {

// "+12.5%", "-3.0%": `value` against `reference`, for summary.md's baseline columns.
std::string change(double value, double reference) {
  const double pct = (value / reference - 1.0) * 100.0;
  return (pct >= 0 ? "+" : "") + fixed(pct, 1) + "%";
}

}  // namespace

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
  const bool compare = !s.baseline.empty();
  // With `baseline:`, each row is set beside its baseline's row, found by key (a shard's summary may lack it).
  std::map<std::string, std::string> baseline_of, row_of;
  if (compare) {
    for (const SweepPoint& p : s.points) baseline_of.emplace(runs_csv_key(p.parsed), p.baseline_key);
    for (const auto& row : rows) row_of.emplace(row_key(row, runs_csv_key_columns()), row);
  }
  std::ostringstream md;
  md << "# Sweep `" << s.name << "`\n\nFrom `" << s.file << "`: " << rows.size()
     << " runs on the simulator. Memory in MiB; peak live is the lower bound for any pool. *Beyond live*: for a "
        "pool that grows on demand, its fragmentation, peak reserved / peak live - 1; for a pool that reserved its "
        "memory up front by its configuration (cnmem's cnmemInit region, tf-bfc without allow_growth) and never held "
        "more, \"reserved up front\": that excess is the reservation, not fragmentation.";
  if (compare)
    md << " The last two columns set each run beside the same experiment with `" << s.baseline
       << "` (the baseline): its iteration time and its peak reserved memory, each as a change from the "
          "baseline's (negative: less time, less memory).";
  md << "\n\n| model | batch | hw | pool | swap | concurrency | status | iteration (ms) | peak live | peak reserved | "
        "beyond live | cudaMalloc calls | allocator time (us) |"
     << (compare ? " time vs baseline | memory vs baseline |" : "") << "\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|---|---|" << (compare ? "---|---|" : "") << "\n";
  std::vector<std::string> f, b;
  for (const auto& row : rows) {
    split_csv_line(row, f);
    md << "| " << f[model] << " | " << f[batch] << " | " << f[hw] << " | " << f[pool] << " | " << f[swap] << " | "
       << f[concurrency] << " | " << f[status] << " | ";
    if (f[status] == "error") {
      md << "| | | | | |" << (compare ? " | |" : "") << "\n";
      continue;
    }
    // From the row's own figures, so that a resumed or merged sweep's summary is the same as an uninterrupted one.
    const uint64_t live_bytes = std::stoull(f[live]), reserved_bytes = std::stoull(f[reserved]);
    const double fragmentation =
        live_bytes ? static_cast<double>(reserved_bytes) / static_cast<double>(live_bytes) - 1.0 : 0.0;
    md << fixed(std::stod(f[iteration]) / 1000.0, 3) << " | " << mib(live_bytes) << " | " << mib(reserved_bytes) << " | "
       << (f[excess] == "reserved up front" ? std::string("reserved up front") : fixed(fragmentation * 100.0, 1) + "%")
       << " | " << f[mallocs] << " | " << fixed(std::stod(f[alloc]), 1) << " |";
    if (compare) {
      const std::string key = row_key(row, runs_csv_key_columns());
      const auto base = row_of.find(baseline_of[key]);
      if (baseline_of[key] == key) {
        md << " baseline | baseline |";
      } else if (base == row_of.end() || f[status] != "ok" || !split_csv_line(base->second, b) || b[status] != "ok" ||
                 std::stod(b[iteration]) <= 0 || std::stoull(b[reserved]) == 0) {
        md << " | |";  // no baseline row to compare with, or one of the two did not complete
      } else {
        md << " " << change(std::stod(f[iteration]), std::stod(b[iteration])) << " | "
           << change(static_cast<double>(reserved_bytes), static_cast<double>(std::stoull(b[reserved]))) << " |";
      }
    }
    md << "\n";
  }
  return md.str();
}

}  // namespace dlsim
