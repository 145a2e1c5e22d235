#include "experiment/layout_search.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "common/config_error.h"
#include "workloads/zoo.h"

namespace dlsim {

using parallel::Layout;

const std::vector<std::string>& layout_candidate_names() {
  static const std::vector<std::string> names = {"dp", "fsdp", "zero1", "zero2"};
  return names;
}

const std::vector<int64_t>& default_tp_degrees() {
  static const std::vector<int64_t> degrees = {2, 4, 8};
  return degrees;
}

std::vector<std::string> default_layout_names(const std::string& model) {
  std::vector<std::string> names = layout_candidate_names();
  if (model_settings(model).tensor_parallel)
    for (int64_t t : default_tp_degrees()) names.push_back("fsdp+tp" + std::to_string(t));
  return names;
}

namespace {

[[noreturn]] void flag_error(const std::string& flag, const std::string& what) {
  throw ConfigError("<command line>", 0, flag, what);
}

std::string valid_names() {
  std::string s;
  for (const std::string& n : layout_candidate_names()) s += (s.empty() ? "" : ", ") + n;
  return s + ", each alone or with +tp<T> (fsdp+tp8)";
}

// The T of "+tp<T>": a whole number in [2, 1024], the builder's bound (tp 1 is the layout without "+tp1").
int64_t parse_tp_degree(const std::string& name, const std::string& digits, const std::string& flag) {
  int64_t t = 0;
  const bool whole = !digits.empty() && digits.size() <= 5 &&
                     std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  if (whole) t = std::stoll(digits);
  if (!whole || t < 2 || t > 1024)
    flag_error(flag, "layout '" + name + "': the tensor-parallel degree after +tp must be a whole number from 2 to "
                     "1024, got '" + digits + "'");
  return t;
}

void check_count(int64_t n, const std::string& flag) {
  if (n < 1 || n > parallel::kMaxRanks)
    flag_error(flag, "expected GPU counts between 1 and " + std::to_string(parallel::kMaxRanks) + ", got " +
                         std::to_string(n));
}

}  // namespace

std::vector<LayoutCandidate> parse_layout_candidates(const std::vector<std::string>& names, const std::string& flag) {
  std::vector<LayoutCandidate> out;
  for (const std::string& n : names) {
    LayoutCandidate c;
    c.name = n;
    const size_t plus = n.find("+tp");
    const std::string dp = n.substr(0, plus);
    if (plus != std::string::npos) c.tp = parse_tp_degree(n, n.substr(plus + 3), flag);
    if (dp == "dp") c.layout = Layout::Ddp;
    else if (dp == "fsdp") c.layout = Layout::Fsdp;
    else if (dp == "zero1" || dp == "zero2") {
      c.layout = Layout::Zero;
      c.zero_stage = dp == "zero1" ? 1 : 2;
    } else
      flag_error(flag, "unknown layout '" + n + "'; valid: " + valid_names() + " (zero3 is fsdp)");
    for (const LayoutCandidate& o : out)
      if (o.name == n) flag_error(flag, "layout '" + n + "' is listed twice");
    out.push_back(c);
  }
  if (out.empty()) flag_error(flag, "names no layout; valid: " + valid_names());
  return out;
}

std::vector<int64_t> check_gpu_counts(std::vector<int64_t> counts, const std::string& flag) {
  if (counts.empty()) flag_error(flag, "names no GPU count");
  for (int64_t n : counts) check_count(n, flag);
  std::sort(counts.begin(), counts.end());
  for (size_t i = 1; i < counts.size(); ++i)
    if (counts[i] == counts[i - 1]) flag_error(flag, "GPU count " + std::to_string(counts[i]) + " is listed twice");
  return counts;
}

std::vector<int64_t> gpu_counts_up_to(int64_t max, const std::string& flag) {
  check_count(max, flag);
  std::vector<int64_t> out;
  for (int64_t n = 1; n < max; n *= 2) out.push_back(n);
  out.push_back(max);
  return out;
}

bool layout_fits_count(const LayoutCandidate& c, int64_t gpus) { return gpus >= c.tp && gpus % c.tp == 0; }

Experiment with_layout(const Experiment& e, const LayoutCandidate& c, int64_t gpus) {
  if (!layout_fits_count(c, gpus))
    throw std::invalid_argument("with_layout: " + std::to_string(gpus) + " GPUs are no layout of " + c.name);
  Experiment x = e;
  x.parallel.layout = c.layout;
  x.parallel.ranks = gpus / c.tp;
  x.parallel.zero_stage = c.zero_stage;
  const bool section_tp = e.parallel.tp > 1;
  x.parallel.tp = c.tp;
  x.parallel.sequence_parallel = c.tp > 1 && (section_tp ? e.parallel.sequence_parallel : true);
  x.parallel.tp_across_nodes = c.tp > 1 && section_tp && e.parallel.tp_across_nodes;
  x.batch = e.batch * c.tp;
  return x;
}

int64_t LayoutSearch::smallest_gpus(size_t layout) const {
  for (size_t j = 0; j < gpus.size(); ++j)
    if (cell(layout, j).fits()) return gpus[j];
  return 0;
}

int LayoutSearch::fastest_at(size_t count) const {
  int best = -1;
  for (size_t i = 0; i < layouts.size(); ++i) {
    const LayoutCell& c = cell(i, count);
    if (c.fits() && (best < 0 || c.iteration_time_us < cell(static_cast<size_t>(best), count).iteration_time_us))
      best = static_cast<int>(i);
  }
  return best;
}

bool LayoutSearch::any_fits() const {
  return std::any_of(cells.begin(), cells.end(), [](const LayoutCell& c) { return c.fits(); });
}

bool LayoutSearch::any_error() const {
  return std::any_of(cells.begin(), cells.end(), [](const LayoutCell& c) { return c.status == "error"; });
}

namespace {

LayoutCell run_cell(const Experiment& e, const LayoutCandidate& c, int64_t gpus, const RunFn& run, int64_t batch_cap,
                    bool max_batch) {
  LayoutCell cell;
  cell.layout = c.name;
  cell.gpus = gpus;
  if (!layout_fits_count(c, gpus)) {
    cell.status = "skipped";
    cell.message = "tp " + std::to_string(c.tp) + " does not divide " + std::to_string(gpus) + " GPUs";
    return cell;
  }
  try {
    const Experiment x = with_layout(e, c, gpus);
    const ExperimentResult r = run(x);
    // As find_max_batch judges a probe: every iteration ran, none out of memory.
    const bool ok = !r.oom && r.iterations_run == x.iterations;
    cell.status = ok ? "fits" : "oom";
    cell.message = r.oom_where;
    cell.iteration_time_us = r.iteration_time_us;
    cell.peak_live_bytes = r.peak_live_bytes;
    cell.peak_reserved_bytes = r.peak_reserved_bytes;
    if (max_batch) {
      // The search is over the batch per GPU (y.batch), which a tp candidate's data-parallel rank runs T times
      // over; the experiment's batch was just run: its probe reuses that run rather than simulating it again.
      const RunFn cached = [&](const Experiment& y) {
        if (y.batch * c.tp == x.batch) return r;
        Experiment z = y;
        z.batch = y.batch * c.tp;
        return run(z);
      };
      Experiment per_gpu = x;
      per_gpu.batch = e.batch;
      const FitResult f = find_max_batch(per_gpu, cached, batch_cap);
      cell.max_batch = f.max_batch;
      cell.iteration_time_at_max_us = f.max_batch > 0 ? f.at_max.iteration_time_us : 0.0;
    }
  } catch (const std::exception& ex) {
    cell.status = "error";
    cell.message = ex.what();
    cell.iteration_time_us = 0;
    cell.max_batch = 0;
  }
  return cell;
}

}  // namespace

LayoutSearch search_layouts(const Experiment& e, const std::vector<LayoutCandidate>& layouts,
                            const std::vector<int64_t>& gpus, const RunFn& run, int64_t batch_cap, bool max_batch) {
  LayoutSearch s;
  s.batch = e.batch;
  s.gpus = gpus;
  for (const LayoutCandidate& c : layouts) {
    s.layouts.push_back(c.name);
    s.tp.push_back(c.tp);
    for (int64_t n : gpus) s.cells.push_back(run_cell(e, c, n, run, batch_cap, max_batch));
  }
  return s;
}

nlohmann::json to_json(const LayoutSearch& s) {
  nlohmann::json j;
  j["batch_per_gpu"] = s.batch;
  j["layouts"] = s.layouts;
  j["gpus"] = s.gpus;
  j["tp"] = s.tp;
  nlohmann::json cells = nlohmann::json::array();
  for (const LayoutCell& c : s.cells) {
    nlohmann::json r = {{"layout", c.layout}, {"gpus", c.gpus}, {"status", c.status}};
    if (c.status == "fits" || c.status == "oom") {
      if (c.fits()) {
        r["iteration_time_us"] = c.iteration_time_us;
        r["samples_per_s_per_gpu"] = c.iteration_time_us > 0 ? static_cast<double>(s.batch) * 1e6 / c.iteration_time_us : 0.0;
      }
      r["peak_live_bytes"] = c.peak_live_bytes;
      r["peak_reserved_bytes"] = c.peak_reserved_bytes;
      r["max_batch_per_gpu"] = c.max_batch;
      if (c.max_batch > 0) r["iteration_time_at_max_batch_us"] = c.iteration_time_at_max_us;
    }
    if (!c.message.empty())
      r[c.status == "error" ? "error" : c.status == "skipped" ? "skipped_because" : "oom_where"] = c.message;
    cells.push_back(r);
  }
  j["cells"] = cells;
  nlohmann::json smallest = nlohmann::json::object();
  for (size_t i = 0; i < s.layouts.size(); ++i) {
    const int64_t n = s.smallest_gpus(i);
    smallest[s.layouts[i]] = n > 0 ? nlohmann::json(n) : nlohmann::json(nullptr);
  }
  j["smallest_gpus"] = smallest;
  nlohmann::json fastest = nlohmann::json::array();
  int64_t fewest = 0;
  std::string fewest_layout;
  for (size_t k = 0; k < s.gpus.size(); ++k) {
    const int f = s.fastest_at(k);
    nlohmann::json r = {{"gpus", s.gpus[k]}};
    r["layout"] = f < 0 ? nlohmann::json(nullptr) : nlohmann::json(s.layouts[static_cast<size_t>(f)]);
    if (f >= 0) r["iteration_time_us"] = s.cell(static_cast<size_t>(f), k).iteration_time_us;
    fastest.push_back(r);
    if (f >= 0 && fewest == 0) {
      fewest = s.gpus[k];
      fewest_layout = s.layouts[static_cast<size_t>(f)];
    }
  }
  j["fastest_that_fits"] = fastest;
  j["fewest_gpus"] = fewest > 0 ? nlohmann::json({{"gpus", fewest}, {"layout", fewest_layout}}) : nlohmann::json(nullptr);
  return j;
}

}  // namespace dlsim
