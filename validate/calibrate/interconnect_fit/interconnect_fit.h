#pragma once
// Fits the parameters of hw/collective_model.h's alpha-beta model to measured NCCL collectives
// (nccl_measurements.h): the base latency, and per link level present in the data its hop latency and bus
// efficiency (each level's link rate stays the hardware file's: an efficiency is achieved over nominal).
//
// The model's own form: the predicted time of a point is collective_cost(net, kind, S, ranks, gpus_per_node, Auto)
// itself, so the fit sees what the simulator will price, ring and tree and the bottleneck's min included. Least
// squares of relative residuals (predicted / measured - 1): sizes span eight decades, and absolute residuals would
// leave the small (latency-bound) points without weight. The unknowns are taken as (alpha0, alpha_intra,
// 1 / e_intra, alpha_inter, 1 / e_inter), in which a one-node ring is linear (t = alpha0 + k alpha_intra +
// f S / (L e)): Gauss-Newton then solves it in one step, and iterates across the min and the tree/ring choice of
// several nodes. Bounds (latencies >= 0, efficiencies <= 1) are kept by fixing a parameter that would cross one
// at the bound and solving again for the others.
//
// What each point constrains: a point's time is alpha0 + k_intra alpha_intra + k_inter alpha_inter + the
// bandwidth term of the bottleneck level, each share reported. One group size of all-reduce alone cannot tell
// alpha0 from alpha_intra (its step count is fixed: 2(n-1)); all-gather or reduce-scatter beside it (n-1 steps),
// or a second group size, can. A parameter the data cannot tell from the others (its Jacobian column in the span
// of those before it, in the order e_intra, alpha0, alpha_intra, e_inter, alpha_inter) or does not touch at all
// keeps the starting file's value, and the fit says so.
#include <string>
#include <vector>

#include "hw/collective_model.h"
#include "validate/calibrate/interconnect_fit/nccl_measurements.h"

namespace dlsim {

enum class LinkParam { BaseLatency, IntraLatency, IntraEfficiency, InterLatency, InterEfficiency };
inline constexpr int kLinkParams = 5;

// The hardware file's dotted key of a parameter (interconnect.intra_node.bus_efficiency).
std::string link_param_key(LinkParam p);

struct FittedLinkParam {
  LinkParam param = LinkParam::BaseLatency;
  double start = 0;     // the starting file's value (microseconds for latencies)
  double value = 0;     // fitted (or start when not fitted)
  bool fitted = false;  // false: not constrained by the data, kept
  bool at_bound = false;
  std::string note;     // why not fitted, or which bound
};

struct FittedPoint {
  NcclPoint point;
  int nodes = 1;
  CollectiveAlgo algo = CollectiveAlgo::Ring;  // what the fitted model picks
  double start_us = 0;   // the starting file's prediction
  double model_us = 0;   // the fitted model's
  double loo_us = 0;     // predicted by the fit to all other points (0 when that fit was not made)
  // Shares of the fitted model's time: base latency, intra hops, inter hops, bandwidth (of `bottleneck`).
  double share_base = 0, share_intra = 0, share_inter = 0, share_bandwidth = 0;
  std::string bottleneck;  // intra_node or inter_node
  std::string constrains() const;  // the largest share, in words
};

struct InterconnectFit {
  Interconnect start, fitted;
  std::vector<FittedLinkParam> params;  // the parameters of the levels present, in LinkParam order
  std::vector<FittedPoint> points;
  double rms_start = 0, rms_fitted = 0, max_fitted = 0;  // relative residuals
  double rms_loo = 0, max_loo = 0;                       // leave-one-point-out (with leave_one_out)
  int iterations = 0;
};

// Fits `start`'s latencies and efficiencies to `points` measured on nodes of `gpus_per_node` ranks. Throws
// std::invalid_argument when a point spans nodes and `start` has no inter-node level, or when there are fewer
// points than parameters to fit. With `leave_one_out`, each point is also predicted by a fit to the others.
InterconnectFit fit_interconnect(const std::vector<NcclPoint>& points, int gpus_per_node, const Interconnect& start,
                                 bool leave_one_out = true);

}  // namespace dlsim
