#pragma once
// Fits the roofline's per-class efficiencies (hw/class_efficiency.h) of one GPU to published iteration times.
//
// The model of a point's iteration time is the sum over its training graph's kernels of the roofline time
//   max(flops / (peak(path) * e(class, path) * u), bytes / (hbm * m(class) * u)) + kernel_fixed,
// with u the kernel's SM share (sm_fraction) when occupancy scaling is on, else 1: the device time of a serial
// run whose host keeps ahead, which is what these batch sizes give (cli's full simulation is reported beside it).
//
// The published iteration times cannot tell every class apart (a forward convolution's share of a CNN's time
// moves with its backward ones), so the fit ties what the data cannot separate:
//   conv_<path>  one efficiency for the forward, backward-data and backward-filter convolutions on a path;
//   gemm_<path>  the GEMMs on a path;
//   memory       one bandwidth efficiency for the memory-bound classes (or, with split_memory,
//                normalization_memory for batch/layer norm and memory for the rest).
// A parameter is fitted when its ops hold at least 1 % of some point's time; one without such ops (GEMMs in a
// fit without any transformer) stays unset, so the file's compute_efficiency stands for it. The alternative,
// tie_gemm_to_conv (a GEMM without data takes its path's convolution value, and a weak penalty, tie_weight,
// pulls gemm_<path> towards conv_<path>), predicted BERT from the CNNs alone 37.7 % off on the A100 (cuDNN's
// TF32 convolutions reach 0.23 of the peak, cuBLAS's TF32 GEMMs 0.49) against 12.6 % untied, and is kept as an
// option only to show that (results/published.md).
// The objective is the sum of squared log-ratios (predicted / measured), so every point counts by its relative
// error; a very weak pull towards the file's compute/memory efficiency (prior_weight) keeps flat directions
// defined. Coordinate descent with a golden-section search per parameter, then a Nelder-Mead simplex from where
// it stopped (coordinate steps crawl along valleys where two efficiencies trade off), on log efficiencies
// bounded to [0.005, 1]: deterministic.
#include <map>
#include <string>
#include <vector>

#include "hw/class_efficiency.h"
#include "hw/gpu_spec.h"
#include "hw/roofline.h"
#include "workloads/graph.h"

namespace dlsim {

// A training graph reduced to what the time model needs: identical ops counted once.
struct OpFeature {
  OpClass cls = OpClass::Elementwise;
  MathPath path = MathPath::CudaCore;
  double flops = 0;
  double bytes = 0;
  double share = 1;   // sm_fraction
  double count = 0;
  bool operator<(const OpFeature& o) const;
};

struct PointModel {
  std::vector<OpFeature> ops;
  double kernels = 0;          // ops that launch a kernel (each costs kernel_fixed)
  std::array<double, 4> peak{};  // FLOP/s per MathPath
  double hbm = 0;               // bytes/s
};
// `roofline` supplies sm_fraction (its tile sizes) and the spec.
PointModel point_model(const Graph& g, const RooflineCostModel& roofline);

struct RegressionSetup {
  bool occupancy_scaling = false;
  bool split_memory = false;
  // A GEMM parameter without data takes its path's convolution value (true), or stays unset: the file's
  // compute_efficiency (false).
  bool tie_gemm_to_conv = false;
  double tie_weight = 0.01;
  double prior_weight = 0.001;
  double compute_default = 0.6;   // the file's compute_efficiency and memory_efficiency (the prior's centre)
  double memory_default = 0.8;
  double kernel_fixed_ns = 2000;
};

// Predicted iteration time (ns) of a point under efficiencies `e` (unset ones: the setup's defaults).
double predict_ns(const PointModel& m, const ClassEfficiencies& e, const RegressionSetup& s);

struct RegressedEfficiencies {
  std::map<std::string, double> values;  // conv_tf32, gemm_fp16, memory, ... : fitted (or tied) efficiencies
  std::map<std::string, bool> fitted;    // false: taken from the tie, not from data
  ClassEfficiencies classes;             // the same, as the roofline's parameters
  double objective = 0;
  size_t points = 0;
};

// Fits one GPU's efficiencies to points (models[i] measured at measured_ns[i]).
RegressedEfficiencies regress_efficiencies(const std::vector<const PointModel*>& models, const std::vector<double>& measured_ns,
                                    const RegressionSetup& s);

// The roofline parameters (hw/class_efficiency.h keys, plus occupancy_scaling) a fit sets, in a fixed order.
std::vector<std::pair<std::string, double>> regressed_parameters(const RegressedEfficiencies& f);

}  // namespace dlsim
