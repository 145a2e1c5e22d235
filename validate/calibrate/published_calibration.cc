#include "validate/calibrate/published_calibration.h"

#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "common/atomic_file.h"
#include "common/config_error.h"
#include "common/strings.h"
#include "hw/gpu_spec_file.h"
#include "hw/roofline.h"
#include "validate/calibrate/calibrated_block.h"
#include "validate/calibrate/published_regression.h"
#include "validate/calibrate/published_points.h"
#include "workloads/zoo.h"

namespace dlsim {
namespace {

// One point, ready for the fit: its graph reduced to the time model's features.
struct Prepared {
  PublishedPoint point;
  std::string source;  // "repo@commit"
  RegressionSetup setup;
  PointModel model;
  double measured_ns = 0;
};

// The roofline parameters of a hardware file, without what a fit sets (its [F] values): the "before".
RooflineOptions base_options(const GpuSpec& spec) {
  Params p(kernel_model_registry().get("roofline").params);
  for (const auto& [k, v] : spec.kernel_model_params.values())
    if (p.has(k)) p.set(k, v);
  RooflineOptions o = RooflineOptions::parameters().from_params(p);
  o.classes = ClassEfficiencies{};
  o.occupancy_scaling = false;
  return o;
}

Prepared prepare(const PublishedPoint& pt, const PublishedData& d, const PublishedCalibrationOptions& o) {
  Prepared r;
  r.point = pt;
  r.source = d.repo + "@" + d.commit;
  ModelOptions mo;
  mo.batch = pt.batch;
  mo.seq_len = pt.seq_len;
  mo.training = pt.training;
  const Graph g = build_training_graph(pt.model, mo);
  const GpuSpec spec = load_gpu_spec(resolve_hw_path(pt.hw));
  const RooflineOptions base = base_options(spec);
  r.model = point_model(g, RooflineCostModel(spec, base));
  r.setup.occupancy_scaling = o.occupancy_scaling;
  r.setup.split_memory = o.split_memory;
  r.setup.tie_gemm_to_conv = o.tie_gemm_to_conv;
  r.setup.compute_default = base.compute_efficiency;
  r.setup.memory_default = base.memory_efficiency;
  r.setup.kernel_fixed_ns = static_cast<double>(base.kernel_fixed_ns);
  r.measured_ns = pt.iteration_ms() * 1e6;
  return r;
}

// Kernel-model parameters for a full simulation: every class efficiency (0 where unset) and occupancy scaling.
std::map<std::string, ParamValue> overrides(const ClassEfficiencies& e, bool occupancy) {
  std::map<std::string, ParamValue> m;
  for (const ParamSpec& s : ClassEfficiencies::parameters().specs()) m[s.name] = 0.0;
  constexpr MathPath paths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};
  for (size_t i = 0; i < compute_classes().size(); ++i)
    for (MathPath p : paths)
      m[ClassEfficiencies::compute_key(compute_classes()[i], p)] = e.compute[i][static_cast<size_t>(p)];
  for (size_t j = 0; j < memory_classes().size(); ++j) m[ClassEfficiencies::memory_key(memory_classes()[j])] = e.memory[j];
  m["occupancy_scaling"] = occupancy;
  return m;
}

struct SimResult {
  double ms = 0;
  bool oom = false;
};

// What dlsim could say before it had fp16, TF32 for matmuls, memory formats and fused kernels: mixed precision
// as mixed-bf16 (on a V100, at the CUDA-core rate), PyTorch's default TF32, eager kernels, no layout transposes
// (for a 16-bit point nhwc stands in for that: it adds none and, on its own, changes no time; a model without
// convolutions has no transposes to leave out, and the experiment reader refuses nhwc on it).
PublishedPoint as_before_issue_9(PublishedPoint p) {
  p.training.memory_format = MemoryFormat::NCHW;
  if (p.training.precision != Precision::FP32) {
    p.training.precision = Precision::MixedBF16;
    if (model_settings(p.model).memory_format) p.training.memory_format = MemoryFormat::NHWC;
  }
  p.training.tf32 = Tf32::Conv;
  p.training.kernels = Kernels::Eager;
  return p;
}

// The point run as an experiment: its framework's allocator, one stream, the given efficiencies (none given:
// the hardware file as it is).
SimResult simulate(const PublishedPoint& p, const std::map<std::string, ParamValue>& kernel_params) {
  YAML::Node n;
  n["model"] = p.model;
  n["batch"] = p.batch;
  if (p.seq_len > 0) n["seq_len"] = p.seq_len;
  n["hw"] = p.hw;
  n["pool"] = p.framework == "tensorflow" ? "tf-bfc" : "pytorch-caching";
  n["swap"] = "none";
  n["concurrency"] = "serial";
  n["iterations"] = 2;
  n["optimizer"] = to_string(p.training.optimizer);
  n["precision"] = to_string(p.training.precision);
  n["tf32"] = to_string(p.training.tf32);
  n["memory_format"] = to_string(p.training.memory_format);
  n["kernels"] = to_string(p.training.kernels);
  Experiment e = experiment_from_yaml(n, p.id);
  e.kernel_model_overrides = kernel_params;
  const ExperimentResult r = run_experiment(e);
  return {r.iteration_time_us / 1000.0, r.oom};
}

// Efficiencies a GPU has no data for, from the first of `from` that has them; bf16 from fp16 where the two
// tensor-core rates are equal (no published point runs bf16). `note` records what was filled and from where.
ClassEfficiencies fill_missing(ClassEfficiencies e, const GpuSpec& spec, const std::vector<std::string>& from,
                               const std::map<std::string, ClassEfficiencies>& fits, std::set<std::string>& note) {
  constexpr MathPath paths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};
  for (size_t i = 0; i < compute_classes().size(); ++i)
    for (MathPath p : paths) {
      double& v = e.compute[i][static_cast<size_t>(p)];
      if (v > 0 || path_peak(spec, p) <= 0 || (p != MathPath::CudaCore && path_peak(spec, p) == spec.peak_fp32)) continue;
      for (const std::string& g : from) {
        auto it = fits.find(g);
        if (it == fits.end() || it->second.compute[i][static_cast<size_t>(p)] <= 0) continue;
        v = it->second.compute[i][static_cast<size_t>(p)];
        note.insert(std::string(to_string(p)) + " from the " + g);
        break;
      }
    }
  for (size_t j = 0; j < memory_classes().size(); ++j) {
    if (e.memory[j] > 0) continue;
    for (const std::string& g : from) {
      auto it = fits.find(g);
      if (it == fits.end() || it->second.memory[j] <= 0) continue;
      e.memory[j] = it->second.memory[j];
      note.insert("memory from the " + g);
      break;
    }
  }
  if (spec.peak_bf16 > 0 && spec.peak_bf16 == spec.peak_fp16)
    for (size_t i = 0; i < compute_classes().size(); ++i) {
      double& b = e.compute[i][static_cast<size_t>(MathPath::Bf16)];
      const double f = e.compute[i][static_cast<size_t>(MathPath::Fp16)];
      if (b <= 0 && f > 0) {
        b = f;
        note.insert("bf16 from fp16 (equal tensor-core rates)");
      }
    }
  return e;
}

// Words of `text` in lines of at most `width` characters.
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines(1);
  for (const std::string& w : split(text, ' ')) {
    if (!lines.back().empty() && lines.back().size() + 1 + w.size() > width) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : " ") + w;
  }
  return lines;
}

std::string pct(double ratio) { return fixed((ratio - 1.0) * 100.0, 1) + " %"; }

double mape(const std::vector<double>& ratios) {
  if (ratios.empty()) return 0;
  double s = 0;
  for (double r : ratios) s += std::fabs(r - 1.0);
  return s / static_cast<double>(ratios.size()) * 100.0;
}

void write_hw_file(const std::string& hw, const ClassEfficiencies& e, bool occupancy, const std::vector<std::string>& comment) {
  const std::string path = resolve_hw_path(hw);
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  std::vector<std::pair<std::string, std::string>> values = {{"occupancy_scaling", occupancy ? "true" : "false"}};
  for (const auto& [k, v] : overrides(e, occupancy)) {
    if (k == "occupancy_scaling") continue;
    const double d = std::get<double>(v);
    if (d > 0) values.emplace_back(k, significant(d, 3));
  }
  const std::string text = with_calibrated_block(buf.str(), comment, values, path);
  write_file_atomically(path, text);
  load_gpu_spec(path);  // what was written must read back
}

// The published points and what the regression made of them.
struct Regression {
  std::vector<Prepared> pts;
  std::string fit_source;  // the first data file with points to fit, for the hardware files' comment
  std::map<std::string, RegressedEfficiencies> fits;  // per GPU
  std::map<std::string, ClassEfficiencies> fit_classes;
  std::vector<ClassEfficiencies> lomo;  // per point: fitted without its model (leave-one-model-out)
  std::vector<char> has_lomo;
  // What each hardware file gets: its GPU's fit (gaps filled from the transfer list), or a transfer.
  std::map<std::string, ClassEfficiencies> per_hw;
  std::map<std::string, std::set<std::string>> notes;
  std::map<std::string, std::string> hw_gpu;
};

void load_points(const PublishedCalibrationOptions& o, Regression& r) {
  for (const std::string& f : o.data) {
    const PublishedData d = load_published_points(f);
    for (const PublishedPoint& p : d.points) {
      if (p.use == PointUse::Excluded) continue;
      r.pts.push_back(prepare(p, d, o));
      if (p.use == PointUse::Fit && r.fit_source.empty()) r.fit_source = f + " (" + d.repo + " at " + d.commit + ")";
    }
  }
}

// Per GPU, the efficiencies fitted to all its points and, per model, to the points of the other models.
void regress_per_gpu(Regression& r) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < r.pts.size(); ++i)
    if (r.pts[i].point.use == PointUse::Fit) groups[r.pts[i].point.gpu].push_back(i);
  auto regress_on = [&](const std::vector<size_t>& idx) {
    std::vector<const PointModel*> models;
    std::vector<double> measured;
    for (size_t i : idx) models.push_back(&r.pts[i].model), measured.push_back(r.pts[i].measured_ns);
    return regress_efficiencies(models, measured, r.pts[idx.front()].setup);
  };
  r.lomo.assign(r.pts.size(), ClassEfficiencies{});
  r.has_lomo.assign(r.pts.size(), 0);
  for (const auto& [gpu, idx] : groups) {
    r.fits[gpu] = regress_on(idx);
    r.fit_classes[gpu] = r.fits[gpu].classes;
    std::set<std::string> models;
    for (size_t i : idx) models.insert(r.pts[i].point.model);
    for (const std::string& m : models) {
      std::vector<size_t> rest;
      for (size_t i : idx)
        if (r.pts[i].point.model != m) rest.push_back(i);
      if (rest.empty()) continue;
      const ClassEfficiencies left_out = regress_on(rest).classes;
      for (size_t i : idx)
        if (r.pts[i].point.model == m) r.lomo[i] = left_out, r.has_lomo[i] = 1;
    }
  }
}

void assign_hw_files(const PublishedCalibrationOptions& o, Regression& r) {
  for (const Prepared& p : r.pts)
    if (p.point.use == PointUse::Fit) r.hw_gpu[p.point.hw] = p.point.gpu;
  for (const auto& [hw, gpu] : r.hw_gpu) {
    std::vector<std::string> from = o.transfer_from;
    from.erase(std::remove(from.begin(), from.end(), gpu), from.end());
    r.per_hw[hw] = fill_missing(r.fit_classes[gpu], load_gpu_spec(resolve_hw_path(hw)), from, r.fit_classes, r.notes[hw]);
  }
  for (const std::string& hw : o.transfer_to) {
    r.notes[hw].insert("transferred");
    r.per_hw[hw] =
        fill_missing(ClassEfficiencies{}, load_gpu_spec(resolve_hw_path(hw)), o.transfer_from, r.fit_classes, r.notes[hw]);
  }
}

// Each point predicted before and after the fit (and with its model left out), as rows; the ratios predicted /
// published per GPU (fitted points) or per hardware file (held-out points, "test:<hw>").
struct Predictions {
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, std::vector<double>> legacy_r, before_r, after_r, lomo_r, after_fit_r;
  std::map<std::string, std::map<std::string, std::vector<double>>> lomo_by_model;
};

nlohmann::json predict_point(const PublishedCalibrationOptions& o, Regression& r, size_t i) {
  const Prepared& p = r.pts[i];
  const bool fit = p.point.use == PointUse::Fit;
  auto it = r.per_hw.find(p.point.hw);
  // A held-out point on a file this run gives no values (a calibrated one) runs on the file as it is.
  const bool as_is = !fit && it == r.per_hw.end();
  const ClassEfficiencies none;
  const ClassEfficiencies after = fit ? r.fit_classes[p.point.gpu] : (it != r.per_hw.end() ? it->second : none);
  nlohmann::json row = {{"id", p.point.id}, {"use", to_string(p.point.use)}, {"gpu", p.point.gpu}, {"hw", p.point.hw},
                        {"model", p.point.model}, {"framework", p.point.framework},
                        {"precision", to_string(p.point.training.precision)}, {"batch", p.point.batch},
                        {"source", p.source + ":" + p.point.path + ":" + std::to_string(p.point.line)},
                        {"published_ms", p.measured_ns / 1e6}};
  row["fit_model_before_ms"] = predict_ns(p.model, none, p.setup) / 1e6;
  row["fit_model_after_ms"] = predict_ns(p.model, after, p.setup) / 1e6;
  if (r.has_lomo[i]) row["fit_model_left_out_ms"] = predict_ns(p.model, r.lomo[i], p.setup) / 1e6;
  if (o.simulate) {
    const SimResult legacy = simulate(as_before_issue_9(p.point), overrides(none, false));
    const SimResult b = simulate(p.point, overrides(none, false));
    const SimResult a = simulate(p.point, as_is ? std::map<std::string, ParamValue>{} : overrides(after, o.occupancy_scaling));
    row["before_issue_9_ms"] = legacy.ms;
    row["before_ms"] = b.ms;
    row["after_ms"] = a.ms;
    row["oom"] = a.oom || b.oom;
    if (r.has_lomo[i]) {
      const SimResult l = simulate(p.point, overrides(r.lomo[i], o.occupancy_scaling));
      row["left_out_ms"] = l.ms;
      row["oom"] = row["oom"].get<bool>() || l.oom;
    }
  } else {
    row["before_ms"] = row["fit_model_before_ms"];
    row["after_ms"] = row["fit_model_after_ms"];
    if (r.has_lomo[i]) row["left_out_ms"] = row["fit_model_left_out_ms"];
    row["oom"] = false;
  }
  return row;
}

Predictions predict(const PublishedCalibrationOptions& o, Regression& r, std::ostream& out) {
  Predictions pr;
  for (size_t i = 0; i < r.pts.size(); ++i) {
    const Prepared& p = r.pts[i];
    const nlohmann::json row = predict_point(o, r, i);
    const double m = p.measured_ns / 1e6;
    const std::string key = p.point.use == PointUse::Fit ? p.point.gpu : "test:" + p.point.hw;
    if (row.contains("before_issue_9_ms")) pr.legacy_r[key].push_back(row["before_issue_9_ms"].get<double>() / m);
    pr.before_r[key].push_back(row["before_ms"].get<double>() / m);
    pr.after_r[key].push_back(row["after_ms"].get<double>() / m);
    pr.after_fit_r[key].push_back(row["fit_model_after_ms"].get<double>() / m);
    if (r.has_lomo[i]) {
      pr.lomo_r[key].push_back(row["left_out_ms"].get<double>() / m);
      pr.lomo_by_model[key][p.point.model].push_back(row["left_out_ms"].get<double>() / m);
    }
    pr.rows.push_back(row);
    out << p.point.id << ": published " << fixed(m, 2) << " ms, before " << fixed(row["before_ms"].get<double>(), 2)
        << ", after " << fixed(row["after_ms"].get<double>(), 2)
        << (r.has_lomo[i] ? ", left out " + fixed(row["left_out_ms"].get<double>(), 2) : std::string())
        << (row["oom"].get<bool>() ? " (OUT OF MEMORY)" : "") << "\n";
  }
  return pr;
}

void print_summary(const Regression& r, Predictions& pr, std::ostream& out) {
  out << "\n";
  for (const auto& [key, v] : pr.after_r)
    out << key << ": " << v.size() << " points, MAPE before " << fixed(mape(pr.before_r[key]), 1) << " %, after "
        << fixed(mape(v), 1) << " % (fit's own model " << fixed(mape(pr.after_fit_r[key]), 1) << " %)"
        << (pr.lomo_r.count(key) ? ", leave-one-model-out " + fixed(mape(pr.lomo_r[key]), 1) + " %" : std::string())
        << "\n";
  for (const auto& [gpu, f] : r.fits) {
    out << gpu << " fitted:";
    for (const auto& [k, v] : f.values) out << " " << k << "=" << significant(v, 3) << (f.fitted.at(k) ? "" : "(tied)");
    out << "\n";
  }
}

void write_hw_files(const PublishedCalibrationOptions& o, Regression& r, std::ostream& out) {
  for (const auto& [hw, e] : r.per_hw) {
    std::string text;
    const auto g = r.hw_gpu.find(hw);
    if (g != r.hw_gpu.end())
      text = "fitted to the " + std::to_string(r.fits[g->second].points) + " published points of the " + g->second +
             " in " + r.fit_source + " by `dlsim calibrate --published` (results/published.md).";
    else
      text = "no published points for this GPU: the values fitted for other GPUs by `dlsim calibrate --published` "
             "(results/published.md), as fractions of this file's own peaks.";
    std::string filled;
    for (const std::string& n : r.notes[hw])
      if (n != "transferred") filled += (filled.empty() ? "" : "; ") + n;
    if (!filled.empty()) text += " Taken over: " + filled + ".";
    text += " The fit ties the three convolution classes on a path, and the four memory-bound classes. A "
            "calibration on the GPU replaces these.";
    write_hw_file(hw, e, o.occupancy_scaling, wrap(text, 104));
    out << "wrote the [F] block of " << hw << "\n";
  }
}

nlohmann::json summary_json(Predictions& pr) {
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [key, v] : pr.after_r) {
    nlohmann::json s = {{"points", v.size()}, {"mape_before", mape(pr.before_r[key])}, {"mape_after", mape(v)},
                        {"mape_after_fit_model", mape(pr.after_fit_r[key])}};
    if (pr.legacy_r.count(key)) s["mape_before_issue_9"] = mape(pr.legacy_r[key]);
    if (pr.lomo_r.count(key)) {
      s["mape_left_out"] = mape(pr.lomo_r[key]);
      for (const auto& [m, rs] : pr.lomo_by_model[key]) s["mape_left_out_by_model"][m] = mape(rs);
    }
    summary[key] = s;
  }
  return summary;
}

// The tables of results/published.md (--report).
void write_report(const std::string& path, const nlohmann::json& rows, const nlohmann::json& summary,
                  const std::map<std::string, RegressedEfficiencies>& fits) {
  std::ostringstream f;
  f << "| point | hardware file | model | framework | precision | batch | published ms | dlsim before issue 9 | "
       "before the fit | after the fit | model left out |\n"
    << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& r : rows) {
    const double m = r["published_ms"].get<double>();
    f << "| " << r["id"].get<std::string>() << " | " << r["hw"].get<std::string>() << " | "
      << r["model"].get<std::string>() << " | " << r["framework"].get<std::string>() << " | "
      << r["precision"].get<std::string>() << " | " << r["batch"].get<int64_t>() << " | " << fixed(m, 1) << " | "
      << (r.contains("before_issue_9_ms") ? fixed(r["before_issue_9_ms"].get<double>(), 1) + " (" +
                                                 pct(r["before_issue_9_ms"].get<double>() / m) + ") | "
                                           : std::string("— | "))
      << fixed(r["before_ms"].get<double>(), 1) << " (" << pct(r["before_ms"].get<double>() / m) << ") | "
      << fixed(r["after_ms"].get<double>(), 1) << " (" << pct(r["after_ms"].get<double>() / m) << ") | "
      << (r.contains("left_out_ms") ? fixed(r["left_out_ms"].get<double>(), 1) + " (" +
                                          pct(r["left_out_ms"].get<double>() / m) + ")"
                                    : std::string("—"))
      << (r["oom"].get<bool>() ? " **OOM**" : "") << " |\n";
  }
  f << "\n| GPU | points | MAPE before issue 9 | MAPE before the fit | MAPE after (in sample) | "
       "leave-one-model-out MAPE | by model left out |\n"
    << "|---|---|---|---|---|---|---|\n";
  for (const auto& [key, s] : summary.items()) {
    f << "| " << key << " | " << s["points"].get<size_t>() << " | "
      << (s.contains("mape_before_issue_9") ? fixed(s["mape_before_issue_9"].get<double>(), 1) + " %" : std::string("—"))
      << " | " << fixed(s["mape_before"].get<double>(), 1)
      << " % | " << fixed(s["mape_after"].get<double>(), 1) << " % | "
      << (s.contains("mape_left_out") ? fixed(s["mape_left_out"].get<double>(), 1) + " %" : std::string("—")) << " | ";
    if (s.contains("mape_left_out_by_model"))
      for (const auto& [m, v] : s["mape_left_out_by_model"].items()) f << m << " " << fixed(v.get<double>(), 1) << " %; ";
    f << "|\n";
  }
  f << "\n| GPU | fitted efficiencies (tied: taken from the convolutions, no data of their own) |\n|---|---|\n";
  for (const auto& [gpu, fv] : fits) {
    f << "| " << gpu << " | ";
    for (const auto& [k, v] : fv.values)
      f << k << " " << significant(v, 3) << (fv.fitted.at(k) ? "" : " (tied)") << "; ";
    f << "|\n";
  }
  write_file_atomically(path, f.str(), "--report");
}

}  // namespace

int run_published_calibration(const PublishedCalibrationOptions& o, std::ostream& out) {
  if (o.data.empty()) throw ConfigError("<command line>", 0, "--published", "give at least one data file");
  Regression r;
  load_points(o, r);
  regress_per_gpu(r);
  assign_hw_files(o, r);
  Predictions pr = predict(o, r, out);
  print_summary(r, pr, out);
  if (o.write_hw) write_hw_files(o, r, out);
  const nlohmann::json summary = summary_json(pr);
  nlohmann::json fitted = nlohmann::json::object();
  for (const auto& [gpu, f] : r.fits)
    for (const auto& [k, v] : f.values) fitted[gpu][k] = {{"value", v}, {"fitted", f.fitted.at(k)}};
  const nlohmann::json all = {{"points", pr.rows}, {"summary", summary}, {"fitted", fitted},
                              {"occupancy_scaling", o.occupancy_scaling}, {"split_memory", o.split_memory},
                              {"simulated", o.simulate}};
  if (!o.json.empty()) {
    write_file_atomically(o.json, all.dump(1) + "\n", "--json");
  }
  if (!o.report.empty()) write_report(o.report, pr.rows, summary, r.fits);
  return 0;
}

}  // namespace dlsim
