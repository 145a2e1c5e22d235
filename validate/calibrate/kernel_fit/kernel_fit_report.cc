#include "validate/calibrate/kernel_fit/kernel_fit_report.h"

#include <sstream>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace dlsim {
namespace {

std::string report_pair(const ErrorSummary& e) {
  if (e.n == 0) return "-";
  return fixed(e.median, 1) + " / " + fixed(e.p90, 1);
}

std::string report_median(const ErrorSummary& e) { return e.n == 0 ? "-" : fixed(e.median, 1); }

std::string report_scale(double v) { return v > 0 ? fixed(v, 3) : "0"; }

// 1 / scale as a percentage of the peak or the bandwidth: what the term's coefficient means.
std::string report_fraction(double scale) { return scale > 0 ? fixed(100.0 / scale, 1) + " %" : "-"; }

}  // namespace

std::string kernel_fit_report(const std::string& command, const FittedKernels& fitted, const KernelCrossValidation& cv,
                              const std::vector<std::string>& notes, const std::string& base_name) {
  std::ostringstream o;
  o << "# Fitted kernel model: cross-validation\n\n"
    << "Written by `" << command << "`.\n\n"
    << "Sweep: " << fitted.fitted_from << ".";
  if (!fitted.timing.empty()) o << " Timing: " << fitted.timing << ".";
  o << "\n\nAbsolute percentage error of each kernel's predicted time against its measured time, median / 90th "
       "percentile, per class. *before*: the base file's (" << base_name << ") own kernel model pricing the same "
       "op; *k-fold*: " << cv.folds << " folds by shape, each predicted by a fit to the others; *LOMO*: the layers of "
       "each zoo model predicted by a fit to every other sample (n: those samples); *in-sample*: the fit to all "
       "samples; *spread*: (us - us_min) / us of the measurements themselves, the noise under every error; "
       "*k-fold near / above fixed*: the k-fold medians of the samples measured under 1.5 times the class's "
       "fixed_us (n) and of the others.\n\n"
    << "| class | samples | spread | before | k-fold | k-fold near / above fixed (n near) | LOMO (n) | in-sample |\n"
    << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [cls, c] : cv.classes)
    o << "| " << cls << " | " << c.samples << " | " << report_pair(c.spread) << " | " << report_pair(c.before) << " | "
      << report_pair(c.kfold) << " | " << report_median(c.kfold_near_fixed) << " / "
      << report_median(c.kfold_above_fixed) << " (" << c.kfold_near_fixed.n << ") | "
      << report_pair(c.lomo) << (c.lomo.n ? " (" + std::to_string(c.lomo.n) + ")" : std::string()) << " | "
      << report_pair(c.fitted) << " |\n";
  if (!cv.lomo_by_model.empty()) {
    o << "\nLeave one model out, every class of the model's layers together:\n\n"
      << "| held-out model | samples | median / p90 |\n|---|---:|---:|\n";
    for (const auto& [m, e] : cv.lomo_by_model) o << "| " << m << " | " << e.n << " | " << report_pair(e) << " |\n";
  }
  o << "\nThe coefficients fitted to all samples (t = fixed + flop_scale F + wave_scale F q + byte_scale B, in us). "
       "*peak share*: 100 / (flop_scale + wave_scale), the share of the path's peak a kernel reaches where its tiles "
       "fill whole waves; *bandwidth share*: 100 / byte_scale. Above 100 %: the term stands for less than its name "
       "(data served from L2, another term or the fixed cost carrying the rest).\n\n"
    << "| class | records | fixed_us | flop_scale | wave_scale | byte_scale | peak share | bandwidth share |\n"
    << "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [cls, c] : fitted.classes)
    o << "| " << cls << " | " << c.records << " | " << fixed(c.fixed_us, 2) << " | " << report_scale(c.flop_scale)
      << " | " << report_scale(c.wave_scale) << " | " << report_scale(c.byte_scale) << " | "
      << report_fraction(c.flop_scale + c.wave_scale) << " | " << report_fraction(c.byte_scale) << " |\n";
  if (!notes.empty()) {
    o << "\nLeft out:\n\n";
    for (const std::string& n : notes) o << "- " << n << '\n';
  }
  return o.str();
}

std::string kernel_predictions_json(const std::string& command, const std::string& base_name, const KernelSweep& sweep,
                                    const std::vector<FitSample>& samples, const KernelCrossValidation& cv) {
  nlohmann::json j = {{"command", command}, {"base", base_name}, {"samples", nlohmann::json::array()}};
  for (size_t i = 0; i < samples.size(); ++i) {
    nlohmann::json s = sweep_record_to_json(sweep.records.at(samples[i].record));
    s["record"] = samples[i].record;
    s["device_timed"] = samples[i].device_timed;
    s["class"] = samples[i].cls;
    s["measured_us"] = samples[i].us;
    const SamplePrediction& p = cv.predictions.at(i);
    s["before_us"] = p.before;
    s["in_sample_us"] = p.in_sample;
    s["kfold_us"] = p.kfold;
    if (!samples[i].model.empty()) s["lomo_us"] = p.lomo;
    j["samples"].push_back(std::move(s));
  }
  return j.dump(1) + "\n";
}

}  // namespace dlsim
