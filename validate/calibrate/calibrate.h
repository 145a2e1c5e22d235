#pragma once
// Calibration: fits the hardware model to what the real GPU did. PCIe latency and bandwidth per direction and
// memory kind, cudaMalloc/cudaFree cost against size (least squares on the micro-benchmarks), launch overhead,
// and per-op kernel times keyed by op signature (hw/op_signature.h: the median of the measured durations; ops
// without a measurement keep the roofline as fallback). The result is the input hardware YAML with the fitted
// values and a kernel_times table.
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "hw/gpu_spec.h"
#include "hw/roofline.h"
#include "program/trace.h"
#include "validate/calibrate/concurrency_regression.h"
#include "validate/gpu/microbench_records.h"
#include "workloads/graph.h"

namespace dlsim {

// y = intercept + slope * x by ordinary least squares; n = number of points (slope 0 when all x are equal).
struct LinearFit {
  double intercept = 0;
  double slope = 0;
  size_t n = 0;
};
LinearFit least_squares(const std::vector<std::pair<double, double>>& xy);
// The same line fitted to relative errors (weights 1/y^2): over sizes from 4 KiB to 1 GiB, ordinary least squares
// lets the largest copies decide the intercept (on an H100 it gave 0 us and 132 us of latency for copies that
// take 5 us at 4 KiB); relative errors give every size its say.
LinearFit least_squares_relative(const std::vector<std::pair<double, double>>& xy);

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

// Median measured duration per op signature over every measured op record of every (graph, trace) pair, with
// each signature's batch-free form (hw/batch_signature.h) where the op carries the batch, so that the table
// also serves the same ops at other batches.
struct KernelTimeFit {
  std::map<std::string, TimeNs> times;
  std::map<std::string, size_t> samples;
  std::map<std::string, std::pair<std::string, int64_t>> batch_free;  // signature -> (batch-free key, batch)
};
KernelTimeFit fit_kernel_times(const std::vector<std::pair<const Graph*, const Trace*>>& runs);

// The cuDNN workspace each convolution's algorithm needed, from the `conv_algorithms` of reports written by
// `dlsim-cuda run --workspace any` (a report of the default rule is capped by the graph's assumption and is
// skipped: `skipped` counts them). One entry per signature; a signature seen twice keeps the larger workspace.
struct WorkspaceFit {
  struct Entry {
    uint64_t bytes = 0;
    std::string algorithm;
    std::string batch_free;  // empty when the op does not carry the batch
    int64_t batch = 0;
  };
  std::map<std::string, Entry> by_signature;
  size_t skipped = 0;
};
WorkspaceFit fit_conv_workspaces(const std::vector<std::pair<const Graph*, const nlohmann::json*>>& reports);

// Per op kind, the median of measured time / the roofline's time under `spec` (its own op_class_scale, class
// efficiencies and occupancy scaling ignored: the single-efficiency roofline) over every measured op: the factor
// by which that roofline misses that kind of kernel on this GPU. A convolution or matmul kind keeps the math path
// its ops ran on (the one most of them took, when they took several), and the factor is over those ops only.
struct ClassScaleFit {
  std::map<OpKind, double> scale;
  std::map<OpKind, size_t> samples;
  std::map<OpKind, MathPath> path;  // convolution and matmul kinds only
};
// The roofline op_class_scale corrects: the file's roofline parameters with one compute and one memory
// efficiency, no occupancy scaling, no op_class_scale (dlsim calibrate --torch-profile fits against it too).
RooflineCostModel single_efficiency_roofline(GpuSpec spec);
ClassScaleFit fit_op_class_scale(const std::vector<std::pair<const Graph*, const Trace*>>& runs, GpuSpec spec);

// The hardware YAML `hw` (as read) with the fitted fields replaced: pcie bandwidths and latency, launch overhead,
// cudamalloc/cudafree, kernel_times, and (when given) conv_workspace and roofline.op_class_scale with
// op_class_scale_path (beside the input's per-class efficiencies, which serve what they do not name), and
// concurrent_kernels.{co_run_slowdown,gemm_blocks_per_sm} (beside the block's other keys). `micro`,
// `workspaces`, `classes` and `concurrency` may be null.
YAML::Node apply_calibration(const YAML::Node& hw, const MicrobenchFit* micro, const KernelTimeFit& kernels,
                             const WorkspaceFit* workspaces = nullptr, const ClassScaleFit* classes = nullptr,
                             const ConcurrencyRegression* concurrency = nullptr);

}  // namespace dlsim
