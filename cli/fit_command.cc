#include "cli/fit_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <ostream>

#include "experiment/batch_search.h"
#include "experiment/layout_search.h"
#include "common/config_error.h"
#include "common/strings.h"

namespace dlsim {

CLI::App* add_fit_command(CLI::App& app, FitCommandOptions& o) {
  CLI::App* cmd = app.add_subcommand("fit", "the largest batch that fits on the experiment's GPU under its policies, or over data-parallel layouts and GPU counts");
  cmd->add_option("EXPERIMENT", o.experiment, "experiment file")->required()->check(CLI::ExistingFile);
  cmd->add_flag("--json", o.json, "print one JSON object");
  cmd->add_option("--memory-at-overhead", o.overheads_percent,
                  "overheads in percent (e.g. 1,5,20): the least memory the swap policy reaches within each")
      ->delimiter(',');
  cmd->add_option("--max-batch", o.max_batch, "largest batch tried")->check(CLI::Range(int64_t{1}, int64_t{1} << 24))->capture_default_str();
  cmd->add_option_function<std::string>(
      "--layouts",
      [&o](const std::string& v) {
        o.layouts_given = true;
        o.layouts = split(v, ',');
      },
      "search over layouts: dp, fsdp, zero1, zero2, each alone or with tensor parallel as +tp<T> (fsdp+tp8; default: the "
      "four, and fsdp+tp2, +tp4, +tp8 for a Llama-family model, when --gpus or --max-gpus is given)");
  cmd->add_option_function<std::string>(
      "--gpus",
      [&o](const std::string& v) {
        o.gpus_given = true;
        o.gpus = v;
      },
      "GPU counts the layouts are tried on (e.g. 1,2,4,8,64)");
  cmd->add_option_function<int64_t>(
      "--max-gpus",
      [&o](int64_t v) {
        o.max_gpus_given = true;
        o.max_gpus = v;
      },
      "GPU counts 1, 2, 4, ... up to this one (instead of --gpus)");
  cmd->add_flag("--no-max-batch", o.no_max_batch, "layout search: only whether the experiment's batch fits, no largest batch");
  return cmd;
}

namespace {

[[noreturn]] void fit_flag_error(const std::string& flag, const std::string& what) {
  throw ConfigError("<command line>", 0, flag, what);
}

// --gpus as typed: comma-separated whole numbers, checked by check_gpu_counts.
std::vector<int64_t> read_gpu_counts(const std::string& text) {
  std::vector<int64_t> out;
  for (const std::string& f : split(text, ',')) {
    size_t used = 0;
    int64_t n = 0;
    try {
      n = std::stoll(f, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != f.size() || used == 0) fit_flag_error("--gpus", "expected whole GPU counts such as 1,2,4,8, got '" + f + "'");
    out.push_back(n);
  }
  return check_gpu_counts(out, "--gpus");
}

std::string pad_right(const std::string& s, size_t w) { return s.size() >= w ? s + " " : s + std::string(w - s.size(), ' '); }
std::string pad_left(const std::string& s, size_t w) { return s.size() >= w ? " " + s : std::string(w - s.size(), ' ') + s; }

int run_layout_search(const FitCommandOptions& o, std::ostream& out) {
  if (!o.overheads_percent.empty()) fit_flag_error("--memory-at-overhead", "does not combine with a layout search (--layouts, --gpus, --max-gpus)");
  if (o.gpus_given && o.max_gpus_given) fit_flag_error("--max-gpus", "give --gpus or --max-gpus, not both");
  if (!o.gpus_given && !o.max_gpus_given) fit_flag_error("--gpus", "a layout search needs the GPU counts: --gpus 1,2,4,8 or --max-gpus N");
  std::vector<LayoutCandidate> layouts;
  if (o.layouts_given) layouts = parse_layout_candidates(o.layouts, "--layouts");
  const std::vector<int64_t> gpus = o.gpus_given ? read_gpu_counts(o.gpus) : gpu_counts_up_to(o.max_gpus, "--max-gpus");
  const Experiment e = load_experiment(o.experiment);
  if (!o.layouts_given) layouts = parse_layout_candidates(default_layout_names(e.model), "--layouts");
  const RunFn run = [](const Experiment& x) { return run_experiment(x, nullptr, nullptr, false); };
  const LayoutSearch s = search_layouts(e, layouts, gpus, run, o.max_batch, !o.no_max_batch);
  const int rc = s.any_error() ? 2 : s.any_fits() ? 0 : 3;
  if (o.json) {
    out << to_json(s).dump(2) << '\n';
    return rc;
  }
  out << "experiment        " << o.experiment << " (" << e.model << " on " << e.hw_label() << ", pool " << e.pool.label()
      << ", swap " << e.swap.label() << ")\n"
      << "batch per GPU     " << s.batch
      << (std::any_of(s.tp.begin(), s.tp.end(), [](int64_t t) { return t > 1; })
              ? " (a +tp<T> layout's data-parallel rank runs T times it over its T GPUs)"
              : "")
      << "\n\n";
  out << pad_right("layout", 10) << pad_left("GPUs", 8) << "  " << pad_right("status", 7) << pad_left("iteration ms", 14)
      << pad_left("peak reserved MiB", 19) << (o.no_max_batch ? "" : pad_left("largest batch/GPU", 19)) << '\n';
  for (const LayoutCell& c : s.cells) {
    const bool ran = c.status == "fits" || c.status == "oom";
    out << pad_right(c.layout, 10) << pad_left(std::to_string(c.gpus), 8) << "  " << pad_right(c.status, 7)
        << pad_left(c.fits() ? fixed(c.iteration_time_us / 1000.0, 3) : "-", 14)
        << pad_left(ran ? mib(c.peak_reserved_bytes) : "-", 19);
    if (!o.no_max_batch) out << pad_left(ran ? std::to_string(c.max_batch) : "-", 19);
    out << '\n';
  }
  out << "\nsmallest GPU count that fits the batch per GPU\n";
  for (size_t i = 0; i < s.layouts.size(); ++i) {
    const int64_t n = s.smallest_gpus(i);
    out << "  " << pad_right(s.layouts[i], 10) << (n > 0 ? std::to_string(n) : "none of the counts tried") << '\n';
  }
  out << "fastest layout that fits, per GPU count\n";
  int64_t fewest = 0;
  std::string fewest_layout;
  for (size_t k = 0; k < s.gpus.size(); ++k) {
    const int f = s.fastest_at(k);
    out << "  " << pad_right(std::to_string(s.gpus[k]), 6);
    if (f < 0) {
      out << "none fits\n";
      continue;
    }
    const LayoutCell& c = s.cell(static_cast<size_t>(f), k);
    out << c.layout << " (" << fixed(c.iteration_time_us / 1000.0, 3) << " ms)\n";
    if (fewest == 0) {
      fewest = c.gpus;
      fewest_layout = c.layout;
    }
  }
  out << "fewest GPUs       " << (fewest > 0 ? std::to_string(fewest) + " (" + fewest_layout + ")" : "none of the counts tried") << '\n';
  for (const LayoutCell& c : s.cells)
    if (c.status == "error") out << "error: " << c.layout << " on " << c.gpus << " GPUs: " << c.message << '\n';
  return rc;
}

}  // namespace

int run_fit_command(const FitCommandOptions& o, std::ostream& out, std::ostream& /*err*/) {
  if (o.layouts_given || o.gpus_given || o.max_gpus_given) return run_layout_search(o, out);
  if (o.no_max_batch) fit_flag_error("--no-max-batch", "applies to a layout search (--gpus or --max-gpus) only");
  std::vector<double> bounds;
  for (double p : o.overheads_percent) {
    // Checked here, not with CLI::Range: a range check lets nan through (every comparison with it is false),
    // and a NaN bound then matched no run without a word.
    if (!std::isfinite(p) || p < 0 || p > 1000)
      throw ConfigError("<command line>", 0, "--memory-at-overhead", "expected percentages in [0, 1000], got " + fixed(p, 1));
    bounds.push_back(p / 100.0);
  }
  const Experiment e = load_experiment(o.experiment);
  const RunFn run = [](const Experiment& x) { return run_experiment(x, nullptr, nullptr, false); };
  std::vector<MemoryAtOverhead> m;
  if (!bounds.empty()) m = memory_at_overhead(e, bounds, run);
  const FitResult f = find_max_batch(e, run, o.max_batch);
  if (o.json) {
    out << to_json(f, m).dump(2) << '\n';
    return f.max_batch > 0 ? 0 : 3;
  }
  out << "experiment        " << o.experiment << " (" << e.model << " on " << e.hw_label() << ", pool " << e.pool.label()
      << ", swap " << e.swap.label() << ")\n";
  if (f.max_batch == 0) {
    out << "largest batch     none: batch 1 runs out of memory\n";
    return 3;
  }
  out << "largest batch     " << f.max_batch << (f.max_batch >= o.max_batch ? " (the --max-batch cap)" : "") << '\n'
      << "iteration time    " << fixed(f.at_max.iteration_time_us / 1000.0, 3) << " ms there\n"
      << "peak reserved     " << mib(f.at_max.peak_reserved_bytes) << " MiB (live " << mib(f.at_max.peak_live_bytes) << " MiB)\n";
  for (const MemoryAtOverhead& x : m) {
    out << "within " << fixed(x.max_overhead * 100.0, 1) << "% overhead: ";
    if (!x.found) out << "no limit tried reaches it\n";
    else
      out << mib(x.peak_live_bytes) << " MiB live, " << mib(x.peak_reserved_bytes) << " MiB reserved (limit_fraction "
          << fixed(x.limit_fraction, 2) << ", overhead " << fixed(x.overhead * 100.0, 1) << "%) at batch " << e.batch << '\n';
  }
  return 0;
}

}  // namespace dlsim
