#include "validate/calibrate/interconnect_fit/interconnect_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "common/strings.h"

namespace dlsim {
namespace {

using LinkValues = std::array<double, kLinkParams>;  // alpha0, alpha_intra (s), 1/e_intra, alpha_inter (s), 1/e_inter

bool ifit_is_latency(int j) { return j == 0 || j == 1 || j == 3; }

LinkValues ifit_values_of(const Interconnect& net) {
  LinkValues p{net.base_latency_s, net.intra.latency_s, 1 / net.intra.bus_efficiency, 0, 1};
  if (net.inter) {
    p[3] = net.inter->latency_s;
    p[4] = 1 / net.inter->bus_efficiency;
  }
  return p;
}

Interconnect ifit_net_of(const LinkValues& p, const Interconnect& start) {
  Interconnect n = start;
  n.base_latency_s = p[0];
  n.intra.latency_s = p[1];
  n.intra.bus_efficiency = 1 / p[2];
  if (n.inter) {
    n.inter->latency_s = p[3];
    n.inter->bus_efficiency = 1 / p[4];
  }
  return n;
}

double ifit_predict_s(const Interconnect& net, const NcclPoint& pt, int gpn) {
  return collective_cost(net, pt.kind, pt.bytes, pt.ranks, gpn, CollectiveAlgo::Auto).time_s;
}

struct IfitProblem {
  const std::vector<const NcclPoint*>& pts;
  int gpn;
  const Interconnect& start;
  std::vector<double> residuals(const LinkValues& p) const {
    const Interconnect net = ifit_net_of(p, start);
    std::vector<double> r;
    r.reserve(pts.size());
    for (const NcclPoint* pt : pts) r.push_back(ifit_predict_s(net, *pt, gpn) / (pt->time_us * 1e-6) - 1);
    return r;
  }
  // Column j of the Jacobian of the residuals, by a forward difference (exact on the model's linear pieces).
  std::vector<double> column(const LinkValues& p, int j, const std::vector<double>& r0) const {
    LinkValues q = p;
    const double h = 1e-6 * std::max(std::abs(p[j]), ifit_is_latency(j) ? 1e-6 : 1.0);
    q[j] += h;
    std::vector<double> r1 = residuals(q);
    for (size_t i = 0; i < r1.size(); ++i) r1[i] = (r1[i] - r0[i]) / h;
    return r1;
  }
};

double ifit_sum_squares(const std::vector<double>& r) {
  double s = 0;
  for (double x : r) s += x * x;
  return s;
}

// Least squares min |J d + r| over the columns `cols` (modified Gram-Schmidt QR on unit-scaled columns).
std::vector<double> ifit_solve(const std::vector<std::vector<double>>& cols, const std::vector<double>& r) {
  const size_t k = cols.size(), n = r.size();
  std::vector<std::vector<double>> q(k);
  std::vector<double> scale(k), rr(k * k, 0.0);
  for (size_t j = 0; j < k; ++j) {
    q[j] = cols[j];
    scale[j] = std::sqrt(ifit_sum_squares(q[j]));
    if (!(scale[j] > 0)) scale[j] = 1;  // a column no point depends on (here): its step is 0 below
    for (double& x : q[j]) x /= scale[j];
  }
  for (size_t j = 0; j < k; ++j) {
    for (size_t i = 0; i < j; ++i) {
      double d = 0;
      for (size_t t = 0; t < n; ++t) d += q[i][t] * q[j][t];
      rr[i * k + j] = d;
      for (size_t t = 0; t < n; ++t) q[j][t] -= d * q[i][t];
    }
    rr[j * k + j] = std::sqrt(ifit_sum_squares(q[j]));
    // A column in the span of those before it (the min of the bottleneck moved past it): it takes no step.
    const bool degenerate = !(rr[j * k + j] > 1e-9);
    for (double& x : q[j]) x = degenerate ? 0 : x / rr[j * k + j];
  }
  std::vector<double> y(k), d(k);
  for (size_t j = 0; j < k; ++j) {
    double s = 0;
    for (size_t t = 0; t < n; ++t) s -= q[j][t] * r[t];
    y[j] = s;
  }
  for (size_t j = k; j-- > 0;) {
    double s = y[j];
    for (size_t i = j + 1; i < k; ++i) s -= rr[j * k + i] * d[i];
    d[j] = rr[j * k + j] > 1e-9 ? s / rr[j * k + j] : 0;
  }
  for (size_t j = 0; j < k; ++j) d[j] /= scale[j];
  return d;
}

const int kIfitOrder[kLinkParams] = {2, 0, 1, 4, 3};  // the order identifiability is decided in (header)

struct IfitCore {
  LinkValues p;
  std::vector<int> free;           // fitted parameters
  std::vector<std::string> notes;  // per parameter: why not fitted ("" when fitted)
  std::vector<bool> at_bound;
  int iterations = 0;
};

IfitCore ifit_core_fit(const IfitProblem& pr, bool inter, const LinkValues& init) {
  IfitCore f;
  f.p = init;
  f.notes.assign(kLinkParams, "");
  f.at_bound.assign(kLinkParams, false);
  // Which parameters these points tell apart: greedy Gram-Schmidt of the Jacobian's columns at the start.
  const std::vector<double> r0 = pr.residuals(f.p);
  std::vector<std::vector<double>> basis;
  for (int j : kIfitOrder) {
    if (!inter && j >= 3) continue;
    std::vector<double> c = pr.column(f.p, j, r0);
    const double norm = std::sqrt(ifit_sum_squares(c));
    if (!(norm > 0)) {
      f.notes[j] = "not constrained: no point's time depends on it (an efficiency: another level bounds every point)";
      continue;
    }
    for (const std::vector<double>& b : basis) {
      double d = 0;
      for (size_t t = 0; t < c.size(); ++t) d += b[t] * c[t];
      for (size_t t = 0; t < c.size(); ++t) c[t] -= d * b[t];
    }
    const double rest = std::sqrt(ifit_sum_squares(c));
    if (!(rest > 1e-6 * norm)) {
      f.notes[j] = "not constrained: these points cannot tell it from the parameters fitted before it";
      continue;
    }
    for (double& x : c) x /= rest;
    basis.push_back(std::move(c));
    f.free.push_back(j);
  }
  // Gauss-Newton with step halving; a parameter crossing its bound is held there, released when the gradient
  // points inwards again.
  std::vector<int> active = f.free;
  for (int round = 0; round < 4; ++round) {
    for (int it = 0; it < 60 && !active.empty(); ++it, ++f.iterations) {
      const std::vector<double> r = pr.residuals(f.p);
      std::vector<std::vector<double>> cols;
      for (int j : active) cols.push_back(pr.column(f.p, j, r));
      const std::vector<double> d = ifit_solve(cols, r);
      const double before = ifit_sum_squares(r);
      double step = 1;
      LinkValues next = f.p;
      for (int half = 0; half < 30; ++half, step /= 2) {
        next = f.p;
        for (size_t a = 0; a < active.size(); ++a) {
          const int j = active[a];
          next[j] = std::max(f.p[j] + step * d[a], ifit_is_latency(j) ? 0.0 : 1.0);
        }
        if (ifit_sum_squares(pr.residuals(next)) <= before) break;
      }
      double moved = 0;
      for (int j : active) moved = std::max(moved, std::abs(next[j] - f.p[j]) / std::max(std::abs(f.p[j]), 1e-9));
      f.p = next;
      std::vector<int> still;
      for (int j : active) {
        const bool bound = f.p[j] <= (ifit_is_latency(j) ? 0.0 : 1.0);
        f.at_bound[j] = bound;
        if (!bound) still.push_back(j);
      }
      active = still;
      if (moved < 1e-10) break;
    }
    // Release a bound parameter whose gradient points inwards (the cost falls as it leaves its bound).
    const std::vector<double> r = pr.residuals(f.p);
    bool released = false;
    for (int j : f.free) {
      if (!f.at_bound[j]) continue;
      const std::vector<double> c = pr.column(f.p, j, r);
      double g = 0;
      for (size_t t = 0; t < c.size(); ++t) g += c[t] * r[t];
      if (g < 0) {
        active.push_back(j);
        f.at_bound[j] = false;
        released = true;
      }
    }
    if (!released) break;
    std::sort(active.begin(), active.end());
  }
  return f;
}

// The fit from the starting file's values and, for points across nodes, also from values where the network bounds
// every ring (its efficiency half of what would make it NVLink's equal): where the min(NVLink, NICs) picks NVLink at
// the start, no step can reach the network's efficiency (its gradient is 0), though the data may say the NICs bound
// them. The lower cost wins; a tie keeps the first (the network's efficiency then reported as not constrained).
IfitCore ifit_best_fit(const IfitProblem& pr, bool inter) {
  const LinkValues init = ifit_values_of(pr.start);
  IfitCore best = ifit_core_fit(pr, inter, init);
  if (!inter) return best;
  LinkValues slow = init;
  const double parity = pr.start.intra.effective() / (pr.gpn * pr.start.inter->bytes_per_s);
  slow[4] = std::max(1.0, 2 / parity);
  IfitCore other = ifit_core_fit(pr, inter, slow);
  if (ifit_sum_squares(pr.residuals(other.p)) < ifit_sum_squares(pr.residuals(best.p)) * (1 - 1e-9)) {
    other.iterations += best.iterations;
    return other;
  }
  best.iterations += other.iterations;
  return best;
}

double ifit_rms(const std::vector<double>& r) { return r.empty() ? 0 : std::sqrt(ifit_sum_squares(r) / r.size()); }

double ifit_max_abs(const std::vector<double>& r) {
  double m = 0;
  for (double x : r) m = std::max(m, std::abs(x));
  return m;
}

void ifit_describe(FittedPoint& fp, const Interconnect& net, int gpn) {
  const NcclPoint& pt = fp.point;
  const CollectiveCost c = collective_cost(net, pt.kind, pt.bytes, pt.ranks, gpn, CollectiveAlgo::Auto);
  fp.algo = c.algo;
  fp.model_us = c.time_s * 1e6;
  const int r = std::min(pt.ranks, gpn);
  fp.nodes = pt.ranks / r;
  auto without = [&](auto zero) {
    Interconnect n = net;
    zero(n);
    return collective_cost(n, pt.kind, pt.bytes, pt.ranks, gpn, c.algo).time_s;
  };
  fp.share_base = net.base_latency_s / c.time_s;
  fp.share_intra = (c.time_s - without([](Interconnect& n) { n.intra.latency_s = 0; })) / c.time_s;
  fp.share_inter =
      net.inter ? (c.time_s - without([](Interconnect& n) { n.inter->latency_s = 0; })) / c.time_s : 0;
  fp.share_bandwidth = (c.time_s - c.alpha_s) / c.time_s;
  fp.bottleneck = fp.nodes > 1 && r * net.inter->effective() < net.intra.effective() ? "inter_node" : "intra_node";
}

}  // namespace

std::string link_param_key(LinkParam p) {
  switch (p) {
    case LinkParam::BaseLatency: return "interconnect.base_latency_us";
    case LinkParam::IntraLatency: return "interconnect.intra_node.latency_us";
    case LinkParam::IntraEfficiency: return "interconnect.intra_node.bus_efficiency";
    case LinkParam::InterLatency: return "interconnect.inter_node.latency_us";
    case LinkParam::InterEfficiency: return "interconnect.inter_node.bus_efficiency";
  }
  return "?";
}

std::string FittedPoint::constrains() const {
  const std::pair<double, std::string> shares[] = {
      {share_bandwidth, bottleneck + ".bus_efficiency"},
      {share_base, "base_latency_us"},
      {share_intra, "intra_node.latency_us"},
      {share_inter, "inter_node.latency_us"}};
  const auto* best = &shares[0];
  for (const auto& s : shares)
    if (s.first > best->first) best = &s;
  return best->second + " (" + fixed(100 * best->first, 0) + " %)";
}

InterconnectFit fit_interconnect(const std::vector<NcclPoint>& points, int gpus_per_node, const Interconnect& start,
                                 bool leave_one_out) {
  if (points.empty()) throw std::invalid_argument("no measured point to fit");
  bool inter = false;
  for (const NcclPoint& p : points) {
    collective_cost(start, p.kind, p.bytes, p.ranks, gpus_per_node);  // the shape's own errors, as the model says
    inter = inter || p.ranks > gpus_per_node;
  }
  std::vector<const NcclPoint*> all;
  for (const NcclPoint& p : points) all.push_back(&p);
  const IfitProblem pr{all, gpus_per_node, start};
  const IfitCore core = ifit_best_fit(pr, inter);

  InterconnectFit out;
  out.start = start;
  out.fitted = ifit_net_of(core.p, start);
  out.iterations = core.iterations;
  const LinkValues s = ifit_values_of(start);
  for (int j = 0; j < kLinkParams; ++j) {
    if (!inter && j >= 3) continue;
    FittedLinkParam fp;
    fp.param = static_cast<LinkParam>(j);
    auto natural = [&](double v) { return ifit_is_latency(j) ? v * 1e6 : 1 / v; };
    fp.start = natural(s[j]);
    fp.value = natural(core.p[j]);
    fp.fitted = std::find(core.free.begin(), core.free.end(), j) != core.free.end();
    fp.at_bound = core.at_bound[j];
    fp.note = fp.fitted ? (fp.at_bound ? (ifit_is_latency(j) ? "at its bound 0" : "at its bound 1: the measured busbw "
                                                                               "reaches the link rate (NVLS?)")
                                       : "")
                        : core.notes[j];
    out.params.push_back(fp);
  }
  std::vector<double> r_start, r_fit, r_loo;
  for (size_t i = 0; i < points.size(); ++i) {
    FittedPoint fp;
    fp.point = points[i];
    fp.start_us = ifit_predict_s(start, points[i], gpus_per_node) * 1e6;
    ifit_describe(fp, out.fitted, gpus_per_node);
    r_start.push_back(fp.start_us / points[i].time_us - 1);
    r_fit.push_back(fp.model_us / points[i].time_us - 1);
    if (leave_one_out && points.size() > 1) {
      std::vector<const NcclPoint*> others;
      for (size_t k = 0; k < points.size(); ++k)
        if (k != i) others.push_back(&points[k]);
      const IfitProblem loo{others, gpus_per_node, start};
      fp.loo_us = ifit_predict_s(ifit_net_of(ifit_best_fit(loo, inter).p, start), points[i], gpus_per_node) * 1e6;
      r_loo.push_back(fp.loo_us / points[i].time_us - 1);
    }
    out.points.push_back(fp);
  }
  out.rms_start = ifit_rms(r_start);
  out.rms_fitted = ifit_rms(r_fit);
  out.max_fitted = ifit_max_abs(r_fit);
  out.rms_loo = ifit_rms(r_loo);
  out.max_loo = ifit_max_abs(r_loo);
  return out;
}

}  // namespace dlsim
