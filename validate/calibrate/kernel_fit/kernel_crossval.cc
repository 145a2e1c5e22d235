#include "validate/calibrate/kernel_fit/kernel_crossval.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "hw/fitted/fitted_cost_model.h"
#include "hw/hardware.h"
#include "validate/calibrate/kernel_fit/kernel_fit.h"
#include "validate/calibrate/kernel_fit/sample_graph.h"

namespace dlsim {
namespace {

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// A spec that prices with `fitted` alone (no measured table), the base file's roofline for the rest.
std::unique_ptr<KernelCostModel> fitted_model_for(const GpuSpec& base, const FittedKernels& fitted) {
  GpuSpec s = base;
  s.kernel_times.clear();
  s.kernel_times_by_batch.clear();
  s.fitted_kernels = fitted;
  s.kernel_model = "fitted";
  return make_cost_model(s);
}

double predicted_us(const KernelCostModel& m, const Graph& g) {
  return static_cast<double>(m.cost(g, g.ops().back()).duration_ns) / 1e3;
}

// A sample measured under this many times its class's fixed cost is mostly that cost.
constexpr double kNearFixedCost = 1.5;

double percent_error(double predicted, double measured) { return std::abs(predicted - measured) / measured * 100.0; }

}  // namespace

ErrorSummary summarize_errors(std::vector<double> v) {
  ErrorSummary s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto at = [&](double p) {
    const double pos = p * static_cast<double>(v.size() - 1);
    const size_t lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.median = at(0.5);
  s.p90 = at(0.9);
  return s;
}

std::vector<int> kfold_assignment(const std::vector<FitSample>& samples, int folds) {
  std::map<std::string, std::set<std::pair<uint64_t, std::string>>> keys_by_class;
  for (const FitSample& s : samples) keys_by_class[s.cls].insert({fnv1a64(s.shape_key), s.shape_key});
  std::map<std::string, int> fold_of_key;
  for (const auto& [cls, keys] : keys_by_class) {
    int i = 0;
    for (const auto& k : keys) fold_of_key[k.second] = i++ % folds;
  }
  std::vector<int> fold;
  fold.reserve(samples.size());
  for (const FitSample& s : samples) fold.push_back(fold_of_key.at(s.shape_key));
  return fold;
}

KernelCrossValidation cross_validate_kernels(const KernelSweep& sweep, const std::vector<FitSample>& samples,
                                             const GpuSpec& base, const FittedKernels& settings, int folds) {
  KernelCrossValidation cv;
  cv.folds = folds;
  std::vector<Graph> graphs;
  graphs.reserve(samples.size());
  for (const FitSample& s : samples) graphs.push_back(sample_graph(sweep.records.at(s.record)));

  std::map<std::string, std::vector<double>> spread, before, fitted, kfold, near_fixed, above_fixed, lomo;
  std::map<std::string, std::vector<double>> lomo_models;
  std::vector<std::string> notes;  // the folds' own notes (a class too small in a fold) are not reported

  const std::unique_ptr<KernelCostModel> base_model = make_cost_model(base);
  const FittedKernels all = fit_kernel_classes(samples, base, settings, notes);
  const std::unique_ptr<KernelCostModel> all_model = fitted_model_for(base, all);
  cv.predictions.resize(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const SweepRecord& r = sweep.records.at(samples[i].record);
    if (samples[i].paired_record == samples[i].record && r.us_min > 0)
      spread[samples[i].cls].push_back((r.us - r.us_min) / r.us * 100.0);
    SamplePrediction& p = cv.predictions[i];
    p.before = predicted_us(*base_model, graphs[i]);
    p.in_sample = predicted_us(*all_model, graphs[i]);
    before[samples[i].cls].push_back(percent_error(p.before, samples[i].us));
    fitted[samples[i].cls].push_back(percent_error(p.in_sample, samples[i].us));
  }

  const std::vector<int> fold = kfold_assignment(samples, folds);
  for (int f = 0; f < folds; ++f) {
    std::vector<FitSample> train;
    for (size_t i = 0; i < samples.size(); ++i)
      if (fold[i] != f) train.push_back(samples[i]);
    const auto model = fitted_model_for(base, fit_kernel_classes(train, base, settings, notes));
    for (size_t i = 0; i < samples.size(); ++i) {
      if (fold[i] != f) continue;
      cv.predictions[i].kfold = predicted_us(*model, graphs[i]);
      const double e = percent_error(cv.predictions[i].kfold, samples[i].us);
      kfold[samples[i].cls].push_back(e);
      const auto c = all.classes.find(samples[i].cls);
      const bool near = c != all.classes.end() && samples[i].us < kNearFixedCost * c->second.fixed_us;
      (near ? near_fixed : above_fixed)[samples[i].cls].push_back(e);
    }
  }

  std::set<std::string> models;
  for (const FitSample& s : samples)
    if (!s.model.empty()) models.insert(s.model);
  for (const std::string& m : models) {
    std::vector<FitSample> train;
    for (const FitSample& s : samples)
      if (s.model != m) train.push_back(s);
    const auto model = fitted_model_for(base, fit_kernel_classes(train, base, settings, notes));
    for (size_t i = 0; i < samples.size(); ++i) {
      if (samples[i].model != m) continue;
      cv.predictions[i].lomo = predicted_us(*model, graphs[i]);
      const double e = percent_error(cv.predictions[i].lomo, samples[i].us);
      lomo[samples[i].cls].push_back(e);
      lomo_models[m].push_back(e);
    }
  }

  for (const auto& [cls, errors] : before) {
    ClassCrossValidation& c = cv.classes[cls];
    c.samples = errors.size();
    c.spread = summarize_errors(spread[cls]);
    c.before = summarize_errors(errors);
    c.fitted = summarize_errors(fitted[cls]);
    c.kfold = summarize_errors(kfold[cls]);
    c.kfold_near_fixed = summarize_errors(near_fixed[cls]);
    c.kfold_above_fixed = summarize_errors(above_fixed[cls]);
    c.lomo = summarize_errors(lomo[cls]);
  }
  for (const auto& [m, errors] : lomo_models) cv.lomo_by_model[m] = summarize_errors(errors);
  return cv;
}

}  // namespace dlsim
