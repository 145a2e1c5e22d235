#include "validate/calibrate/concurrency_regression.h"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include "common/config_error.h"
#include "hw/roofline.h"
#include "sim/concurrent_kernels.h"

namespace dlsim {

namespace {

// "n32 c256 h14 w14 k256 r3 fp32": batch, input channels, height, width, output channels, filter size (stride
// 1, padding that keeps the size, as the harness runs them).
std::map<char, int64_t> parse_shape(const std::string& shape, const std::string& file) {
  std::map<char, int64_t> v;
  std::istringstream in(shape);
  std::string word;
  while (in >> word) {
    if (word.size() < 2 || std::string("nchwkr").find(word[0]) == std::string::npos) continue;  // "fp32"
    try {
      size_t used = 0;
      const int64_t x = std::stoll(word.substr(1), &used);
      if (used + 1 != word.size() || x <= 0) throw std::invalid_argument(word);
      v[word[0]] = x;
    } catch (const std::exception&) {
      throw ConfigError(file, 0, "concurrency.shape", "cannot read '" + word + "' in '" + shape + "'");
    }
  }
  for (char c : std::string("nchwkr"))
    if (!v.contains(c))
      throw ConfigError(file, 0, "concurrency.shape", std::string("'") + shape + "' lacks " + c + "<number>");
  return v;
}

}  // namespace

double simulated_conv_speedup(const GpuSpec& spec, const ConcurrencySample& s, const std::string& file,
                              int64_t* blocks_out) {
  if (!(s.single_ns > 0) || s.convs < 1)
    throw ConfigError(file, 0, "concurrency.single_ns", "needs a positive single_ns and at least one convolution");
  const auto v = parse_shape(s.shape, file);
  const double out = static_cast<double>(v.at('n') * v.at('k') * v.at('h') * v.at('w'));
  const double k = static_cast<double>(v.at('c') * v.at('r') * v.at('r'));
  const RooflineOptions o = RooflineOptions::parameters().from_params(spec.kernel_model_params);
  ConcurrentKernel kernel;
  kernel.cost.duration_ns = static_cast<TimeNs>(std::llround(s.single_ns));
  kernel.cost.blocks = tensor_core_blocks(out, k, spec.sms, o.tensor_tile_elems, o.min_split_k);
  kernel.cost.blocks_per_sm = spec.concurrency.gemm_blocks_per_sm;
  kernel.bytes = static_cast<uint64_t>(
      4 * (v.at('n') * v.at('c') * v.at('h') * v.at('w') + v.at('k') * v.at('c') * v.at('r') * v.at('r') +
           v.at('n') * v.at('k') * v.at('h') * v.at('w')));
  if (blocks_out) *blocks_out = kernel.cost.blocks;
  const std::vector<ConcurrentKernel> kernels(static_cast<size_t>(s.convs), kernel);
  const TimeNs makespan = concurrent_makespan(spec, kernels);
  return static_cast<double>(s.convs) * static_cast<double>(kernel.cost.duration_ns) / static_cast<double>(makespan);
}

ConcurrencyRegression regress_concurrency(const MicrobenchResults& r, const GpuSpec& spec, const std::string& file) {
  ConcurrencyRegression best;
  best.co_run_slowdown = spec.concurrency.co_run_slowdown;
  best.gemm_blocks_per_sm = spec.concurrency.gemm_blocks_per_sm;
  if (r.concurrency.empty()) return best;
  for (const ConcurrencySample& s : r.concurrency)
    if (!(s.serial_ns > 0 && s.parallel_ns > 0))
      throw ConfigError(file, 0, "concurrency", "serial_ns and parallel_ns must be positive (" + s.shape + ")");
  double best_error = std::numeric_limits<double>::infinity();
  GpuSpec trial = spec;
  for (int per_sm = 1; per_sm <= 4; ++per_sm) {
    for (int step = 0; step <= 2000; ++step) {
      trial.concurrency.gemm_blocks_per_sm = per_sm;
      trial.concurrency.co_run_slowdown = step / 1000.0;
      double error = 0;
      for (const ConcurrencySample& s : r.concurrency) {
        const double e = std::log(simulated_conv_speedup(trial, s, file) / (s.serial_ns / s.parallel_ns));
        error += e * e;
      }
      if (error < best_error - 1e-12) {  // strict: ties keep the smaller values
        best_error = error;
        best.gemm_blocks_per_sm = per_sm;
        best.co_run_slowdown = trial.concurrency.co_run_slowdown;
      }
    }
  }
  trial.concurrency.gemm_blocks_per_sm = best.gemm_blocks_per_sm;
  trial.concurrency.co_run_slowdown = best.co_run_slowdown;
  for (const ConcurrencySample& s : r.concurrency) {
    ConcurrencyRegression::Point p;
    p.convs = s.convs;
    p.shape = s.shape;
    p.measured_speedup = s.serial_ns / s.parallel_ns;
    p.simulated_speedup = simulated_conv_speedup(trial, s, file, &p.blocks);
    best.points.push_back(p);
  }
  best.rms_log_error = std::sqrt(best_error / static_cast<double>(r.concurrency.size()));
  return best;
}

}  // namespace dlsim
