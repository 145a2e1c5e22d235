#include "validate/calibrate/interconnect_fit/interconnect_fit.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace dlsim;

namespace {

// The shipped H100 file's interconnect (configs/hw/h100-sxm.yaml): where every fit below starts.
Interconnect ifit_h100_start() {
  Interconnect n;
  n.base_latency_s = 8.4e-6;
  n.intra = {450e9, 3.4e-6, 0.82};
  n.inter = LinkLevel{50e9, 14e-6, 0.94};
  return n;
}

// nccl_bandwidth.py's grid: every group size, collective and size from 8 B doubling to 1 GiB, timed by `truth`
// (times a factor per point: 1 for exact data).
std::vector<NcclPoint> ifit_measured_by(const Interconnect& truth, const std::vector<int>& groups, int gpn,
                                   const std::vector<CollectiveKind>& kinds, double noise = 0) {
  std::vector<NcclPoint> pts;
  for (int g : groups)
    for (CollectiveKind k : kinds)
      for (uint64_t s = 8; s <= (uint64_t{1} << 30); s *= 2) {
        NcclPoint p;
        p.kind = k;
        p.ranks = g;
        p.bytes = s;
        // A deterministic +-noise, alternating with the point's index: no seed to keep.
        const double wobble = 1 + (pts.size() % 2 ? noise : -noise);
        p.time_us = collective_cost(truth, k, s, g, gpn).time_s * 1e6 * wobble;
        p.row = pts.size();
        pts.push_back(p);
      }
  return pts;
}

const std::vector<CollectiveKind> kIfitAll = {CollectiveKind::AllReduce, CollectiveKind::AllGather,
                                          CollectiveKind::ReduceScatter};

const FittedLinkParam& ifit_param(const InterconnectFit& f, LinkParam p) {
  for (const FittedLinkParam& x : f.params)
    if (x.param == p) return x;
  FAIL("no parameter " << link_param_key(p));
  return f.params.front();
}

}  // namespace

TEST_CASE("one node: measurements made by the model with known parameters are fitted back to them") {
  Interconnect truth = ifit_h100_start();
  truth.base_latency_s = 12e-6;
  truth.intra.latency_s = 2.5e-6;
  truth.intra.bus_efficiency = 0.78;
  const auto pts = ifit_measured_by(truth, {2, 4, 8}, 8, kIfitAll);
  const InterconnectFit f = fit_interconnect(pts, 8, ifit_h100_start(), false);
  REQUIRE(f.params.size() == 3);  // no point spans nodes: the network's two are not fitted nor written
  CHECK(ifit_param(f, LinkParam::BaseLatency).fitted);
  CHECK(ifit_param(f, LinkParam::BaseLatency).value == Approx(12).epsilon(1e-6));
  CHECK(ifit_param(f, LinkParam::IntraLatency).value == Approx(2.5).epsilon(1e-6));
  CHECK(ifit_param(f, LinkParam::IntraEfficiency).value == Approx(0.78).epsilon(1e-6));
  CHECK(ifit_param(f, LinkParam::IntraEfficiency).start == Approx(0.82));
  CHECK(f.rms_fitted < 1e-6);
  CHECK(f.rms_start > 0.05);  // the start was off, so the fit did something
  // What the points constrain: 8 B is latency (base and hops), 1 GiB the NVLink's efficiency.
  CHECK(f.points.front().share_bandwidth < 0.01);
  CHECK_THAT(f.points.back().constrains(), Catch::StartsWith("intra_node.bus_efficiency (99 %"));
  CHECK(f.points.front().constrains().find("latency_us") != std::string::npos);
}

TEST_CASE("one node, 2 GPUs (the lent machine of issue 32's plan): all-reduce beside all-gather separates the latencies") {
  Interconnect truth = ifit_h100_start();
  truth.base_latency_s = 20e-6;
  truth.intra.latency_s = 1e-6;
  truth.intra.bus_efficiency = 0.9;
  const InterconnectFit f =
      fit_interconnect(ifit_measured_by(truth, {2}, 2, kIfitAll), 2, ifit_h100_start(), true);
  CHECK(ifit_param(f, LinkParam::BaseLatency).value == Approx(20).epsilon(1e-6));
  CHECK(ifit_param(f, LinkParam::IntraLatency).value == Approx(1).epsilon(1e-5));
  CHECK(ifit_param(f, LinkParam::IntraEfficiency).value == Approx(0.9).epsilon(1e-6));
  CHECK(f.rms_loo < 1e-6);  // exact data: every point is predicted by the others
}

TEST_CASE("all-reduce at one group size alone cannot tell the base latency from the hop latency: the latter is kept") {
  Interconnect truth = ifit_h100_start();
  truth.base_latency_s = 60e-6;
  truth.intra.latency_s = 3e-6;
  const InterconnectFit f =
      fit_interconnect(ifit_measured_by(truth, {8}, 8, {CollectiveKind::AllReduce}), 8, ifit_h100_start(), false);
  const FittedLinkParam& hop = ifit_param(f, LinkParam::IntraLatency);
  CHECK_FALSE(hop.fitted);
  CHECK(hop.value == Approx(3.4));
  CHECK_THAT(hop.note, Catch::Contains("cannot tell it from"));
  // The base latency absorbs the difference: 60 + 14 x 3 = 102 us of latency, 14 x 3.4 of it the kept hops.
  CHECK(ifit_param(f, LinkParam::BaseLatency).value == Approx(102 - 14 * 3.4).epsilon(1e-6));
  CHECK(f.rms_fitted < 1e-6);
}

TEST_CASE("two nodes: the network's latency and efficiency are fitted where the NICs bound the ring") {
  Interconnect truth = ifit_h100_start();
  truth.base_latency_s = 10e-6;
  truth.intra = {450e9, 2e-6, 0.8};
  truth.inter = LinkLevel{50e9, 7e-6, 0.7};  // 8 x 35 = 280 GB/s < 360: the NICs bound rings across nodes
  const auto pts = ifit_measured_by(truth, {2, 8, 16, 32}, 8, kIfitAll);
  const InterconnectFit f = fit_interconnect(pts, 8, ifit_h100_start(), false);
  REQUIRE(f.params.size() == 5);
  CHECK(ifit_param(f, LinkParam::BaseLatency).value == Approx(10).epsilon(1e-5));
  CHECK(ifit_param(f, LinkParam::IntraLatency).value == Approx(2).epsilon(1e-5));
  CHECK(ifit_param(f, LinkParam::IntraEfficiency).value == Approx(0.8).epsilon(1e-6));
  CHECK(ifit_param(f, LinkParam::InterLatency).value == Approx(7).epsilon(1e-5));
  CHECK(ifit_param(f, LinkParam::InterEfficiency).value == Approx(0.7).epsilon(1e-6));
  CHECK(f.rms_fitted < 1e-6);
  bool tree = false;
  for (const FittedPoint& p : f.points) {
    tree = tree || p.algo == CollectiveAlgo::Tree;
    if (p.nodes > 1 && p.point.bytes == (uint64_t{1} << 30)) CHECK(p.bottleneck == "inter_node");
  }
  CHECK(tree);  // auto picks the tree for some all-reduces across nodes, and the fit followed it
}

TEST_CASE("noisy measurements: the fit lands near the truth and its residuals are the noise's") {
  Interconnect truth = ifit_h100_start();
  truth.base_latency_s = 12e-6;
  truth.intra.latency_s = 2.5e-6;
  truth.intra.bus_efficiency = 0.78;
  const InterconnectFit f = fit_interconnect(ifit_measured_by(truth, {2, 4, 8}, 8, kIfitAll, 0.03), 8, ifit_h100_start(), true);
  CHECK(ifit_param(f, LinkParam::BaseLatency).value == Approx(12).epsilon(0.05));
  CHECK(ifit_param(f, LinkParam::IntraLatency).value == Approx(2.5).epsilon(0.05));
  CHECK(ifit_param(f, LinkParam::IntraEfficiency).value == Approx(0.78).epsilon(0.01));
  CHECK(f.rms_fitted == Approx(0.03).epsilon(0.05));
  CHECK(f.rms_loo >= f.rms_fitted);
  CHECK(f.rms_loo < 0.035);
}

TEST_CASE("a link faster than the file's rate pins the efficiency at 1, saying so") {
  Interconnect truth = ifit_h100_start();
  truth.intra = {500e9, 3.4e-6, 1.0};  // NVLS-like: busbw above the 450 GB/s the file gives
  const InterconnectFit f = fit_interconnect(ifit_measured_by(truth, {8}, 8, kIfitAll), 8, ifit_h100_start(), false);
  const FittedLinkParam& e = ifit_param(f, LinkParam::IntraEfficiency);
  CHECK(e.fitted);
  CHECK(e.at_bound);
  CHECK(e.value == 1.0);
  CHECK_THAT(e.note, Catch::Contains("bound 1"));
  CHECK(f.rms_fitted > 0.01);  // the model cannot follow, and the residual shows it
}

TEST_CASE("points across nodes without a network level are refused by the model's own check") {
  Interconnect start = ifit_h100_start();
  start.inter.reset();
  const auto pts = ifit_measured_by(ifit_h100_start(), {16}, 8, {CollectiveKind::AllGather});
  CHECK_THROWS_WITH(fit_interconnect(pts, 8, start), Catch::Contains("inter-node level"));
  CHECK_THROWS_WITH(fit_interconnect({}, 8, start), Catch::Contains("no measured point"));
}
