#pragma once
// Calibration: fits the hardware model to what the real GPU did. PCIe latency and bandwidth per direction and
// memory kind, cudaMalloc/cudaFree cost against size (least squares on the micro-benchmarks), launch overhead,
// and per-op kernel times keyed by op signature (hw/op_signature.h: the median of the measured durations; ops
// without a measurement keep the roofline as fallback). The result is the input hardware YAML with the fitted
// values and a kernel_times table.
#include <yaml-cpp/yaml.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/trace.h"
#include "validate/microbench_records.h"
#include "workloads/graph.h"

namespace dlsim {

// y = intercept + slope * x by ordinary least squares; n = number of points (slope 0 when all x are equal).
struct LinearFit {
  double intercept = 0;
  double slope = 0;
  size_t n = 0;
};
LinearFit least_squares(const std::vector<std::pair<double, double>>& xy);

struct CopyFit {
  double latency_ns = 0;
  double bandwidth = 0;  // bytes/s
  size_t samples = 0;
};

struct MicrobenchFit {
  std::map<std::pair<CopyDir, bool>, CopyFit> copies;        // (direction, pinned), each direction alone
  std::map<CopyDir, double> bidirectional_bandwidth;        // pinned, with the other direction busy (bytes/s)
  LinearFit malloc_ns_vs_gib, free_ns_vs_gib;               // ns = base + per_gib * GiB
  double launch_overhead_ns = 0;
};
// Throws ConfigError(file) when a needed series is missing or a fit is not physical (negative bandwidth).
MicrobenchFit fit_microbench(const MicrobenchResults& r, const std::string& file);

double median(std::vector<double> v);

// Median measured duration per op signature over every measured op record of every (graph, trace) pair.
struct KernelTimeFit {
  std::map<std::string, TimeNs> times;
  std::map<std::string, size_t> samples;
};
KernelTimeFit fit_kernel_times(const std::vector<std::pair<const Graph*, const Trace*>>& runs);

// The hardware YAML `hw` (as read) with the fitted fields replaced: pcie bandwidths and latency, launch overhead,
// cudamalloc/cudafree, kernel_times. `micro` may be null (kernel times only).
YAML::Node apply_calibration(const YAML::Node& hw, const MicrobenchFit* micro, const KernelTimeFit& kernels);

}  // namespace dlsim
