#include "validate/calibrate/published_regression.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace dlsim {
namespace {

constexpr MathPath kPaths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};
constexpr double kLogLo = -5.298317366548036;  // ln 0.005
constexpr double kLogHi = 0.0;                 // ln 1
constexpr double kActiveShare = 0.01;          // a parameter is fitted when its ops hold 1 % of a point's time

std::string path_name(MathPath p) { return p == MathPath::CudaCore ? "cuda_core" : to_string(p); }

// A fit parameter: a name and the class slots it sets.
struct Param {
  std::string name;
  std::vector<OpClass> compute;  // compute classes it sets on `path`
  MathPath path = MathPath::CudaCore;
  std::vector<OpClass> memory;   // memory classes it sets
  std::string tie;               // the parameter it is tied to ("" for none)
  double centre = 0.6;           // the prior's centre
};

std::vector<Param> all_params(const RegressionSetup& s) {
  std::vector<Param> v;
  for (MathPath p : kPaths) {
    v.push_back({"conv_" + path_name(p), {OpClass::ConvFwd, OpClass::ConvDgrad, OpClass::ConvWgrad}, p, {}, "",
                 s.compute_default});
    v.push_back({"gemm_" + path_name(p), {OpClass::Gemm}, p, {}, s.tie_gemm_to_conv ? "conv_" + path_name(p) : "",
                 s.compute_default});
  }
  if (s.split_memory) {
    v.push_back({"normalization_memory", {}, MathPath::CudaCore, {OpClass::Normalization}, "memory", s.memory_default});
    v.push_back({"memory", {}, MathPath::CudaCore, {OpClass::Elementwise, OpClass::Reduction, OpClass::Optimizer}, "",
                 s.memory_default});
  } else {
    v.push_back({"memory", {}, MathPath::CudaCore, memory_classes(), "", s.memory_default});
  }
  return v;
}

bool sets_op(const Param& p, const OpFeature& op, bool compute_side) {
  if (compute_side)
    return op.path == p.path && std::find(p.compute.begin(), p.compute.end(), op.cls) != p.compute.end();
  return std::find(p.memory.begin(), p.memory.end(), op.cls) != p.memory.end();
}

void set_param(ClassEfficiencies& e, const Param& p, double value) {
  for (OpClass c : p.compute) {
    const auto i = static_cast<size_t>(std::find(compute_classes().begin(), compute_classes().end(), c) -
                                       compute_classes().begin());
    e.compute[i][static_cast<size_t>(p.path)] = value;
  }
  for (OpClass c : p.memory) {
    const auto j = static_cast<size_t>(std::find(memory_classes().begin(), memory_classes().end(), c) -
                                       memory_classes().begin());
    e.memory[j] = value;
  }
}

// Op time under efficiencies e, and which side (compute or memory) bounds it.
double op_seconds(const OpFeature& op, const PointModel& m, const ClassEfficiencies& e, const RegressionSetup& s,
                  bool* compute_bound = nullptr) {
  const double u = s.occupancy_scaling ? op.share : 1.0;
  const double ce = e.compute_for(op.cls, op.path, s.compute_default);
  const double me = e.memory_for(op.cls, s.memory_default);
  const double c = op.flops / (m.peak[static_cast<size_t>(op.path)] * ce * u);
  const double b = op.bytes / (m.hbm * me * u);
  if (compute_bound) *compute_bound = c >= b;
  return std::max(c, b);
}

class Fitter {
 public:
  Fitter(const std::vector<const PointModel*>& models, const std::vector<double>& measured, const RegressionSetup& s)
      : models_(models), measured_(measured), s_(s), params_(all_params(s)) {
    find_active();
    theta_.assign(params_.size(), 0.0);
    for (size_t i = 0; i < params_.size(); ++i) theta_[i] = std::log(params_[i].centre);
  }

  RegressedEfficiencies run() {
    double best = objective(theta_);
    for (int sweep = 0; sweep < 40; ++sweep) {
      const double before = best;
      for (size_t i = 0; i < params_.size(); ++i) {
        if (!active_[i]) continue;
        best = line_search(i);
      }
      if (before - best < 1e-12) break;
    }
    // Coordinate steps crawl along a valley where two parameters trade off (a convolution efficiency against the
    // memory one); a simplex search from where they stopped follows it.
    best = nelder_mead(best);
    RegressedEfficiencies f;
    f.objective = best;
    f.points = models_.size();
    f.classes = efficiencies(theta_);
    for (size_t i = 0; i < params_.size(); ++i) {
      const double v = value(theta_, i);
      if (v <= 0) continue;
      f.values[params_[i].name] = v;
      f.fitted[params_[i].name] = active_[i];
    }
    return f;
  }

 private:
  const std::vector<const PointModel*>& models_;
  const std::vector<double>& measured_;
  RegressionSetup s_;
  std::vector<Param> params_;
  std::vector<char> active_;
  std::vector<double> theta_;

  size_t index_of(const std::string& name) const {
    for (size_t i = 0; i < params_.size(); ++i)
      if (params_[i].name == name) return i;
    return params_.size();
  }

  // A parameter is fitted when its ops hold kActiveShare of some point's time under the defaults.
  void find_active() {
    active_.assign(params_.size(), 0);
    const ClassEfficiencies none;
    for (const PointModel* m : models_) {
      std::vector<double> t(params_.size(), 0.0);
      double total = 0;
      for (const OpFeature& op : m->ops) {
        bool compute_bound = false;
        const double sec = op_seconds(op, *m, none, s_, &compute_bound) * op.count;
        total += sec;
        for (size_t i = 0; i < params_.size(); ++i)
          if (sets_op(params_[i], op, compute_bound)) t[i] += sec;
      }
      for (size_t i = 0; i < params_.size(); ++i)
        if (total > 0 && t[i] / total >= kActiveShare) active_[i] = 1;
    }
  }

  // The efficiency parameter i stands at: its own when fitted, its tie's when not, else unset (0).
  double value(const std::vector<double>& th, size_t i) const {
    if (active_[i]) return std::exp(th[i]);
    const size_t t = index_of(params_[i].tie);
    if (t < params_.size() && active_[t]) return std::exp(th[t]);
    return 0;
  }

  ClassEfficiencies efficiencies(const std::vector<double>& th) const {
    ClassEfficiencies e;
    for (size_t i = 0; i < params_.size(); ++i) set_param(e, params_[i], value(th, i));
    return e;
  }

  double objective(const std::vector<double>& th) const {
    const ClassEfficiencies e = efficiencies(th);
    double sum = 0;
    for (size_t k = 0; k < models_.size(); ++k) {
      const double r = std::log(predict_ns(*models_[k], e, s_) / measured_[k]);
      sum += r * r;
    }
    for (size_t i = 0; i < params_.size(); ++i) {
      if (!active_[i]) continue;
      const double c = th[i] - std::log(params_[i].centre);
      sum += s_.prior_weight * c * c;
      const size_t t = index_of(params_[i].tie);
      if (t < params_.size() && active_[t]) {
        const double d = th[i] - th[t];
        sum += s_.tie_weight * d * d;
      }
    }
    return sum;
  }

  // Nelder-Mead over the active parameters, bounded by clamping to [kLogLo, kLogHi].
  double nelder_mead(double start_value) {
    std::vector<size_t> idx;
    for (size_t i = 0; i < params_.size(); ++i)
      if (active_[i]) idx.push_back(i);
    const size_t n = idx.size();
    if (n == 0) return start_value;
    auto at = [&](const std::vector<double>& x) {
      std::vector<double> th = theta_;
      for (size_t k = 0; k < n; ++k) th[idx[k]] = std::clamp(x[k], kLogLo, kLogHi);
      return th;
    };
    auto f = [&](const std::vector<double>& x) { return objective(at(x)); };
    std::vector<std::vector<double>> simplex(n + 1, std::vector<double>(n));
    for (size_t k = 0; k < n; ++k) simplex[0][k] = theta_[idx[k]];
    for (size_t j = 1; j <= n; ++j) {
      simplex[j] = simplex[0];
      simplex[j][j - 1] += 0.05;
    }
    std::vector<double> fv(n + 1);
    for (size_t j = 0; j <= n; ++j) fv[j] = f(simplex[j]);
    for (int it = 0; it < 4000; ++it) {
      std::vector<size_t> order(n + 1);
      for (size_t j = 0; j <= n; ++j) order[j] = j;
      std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return fv[a] < fv[b]; });
      const size_t lo = order.front(), hi = order.back(), second = order[n - 1];
      if (fv[hi] - fv[lo] < 1e-15) break;
      std::vector<double> c(n, 0.0);
      for (size_t j = 0; j <= n; ++j)
        if (j != hi)
          for (size_t k = 0; k < n; ++k) c[k] += simplex[j][k] / static_cast<double>(n);
      auto along = [&](double t) {
        std::vector<double> x(n);
        for (size_t k = 0; k < n; ++k) x[k] = c[k] + t * (simplex[hi][k] - c[k]);
        return x;
      };
      const std::vector<double> r = along(-1.0);
      const double fr = f(r);
      if (fr < fv[lo]) {
        const std::vector<double> e = along(-2.0);
        const double fe = f(e);
        if (fe < fr) simplex[hi] = e, fv[hi] = fe;
        else simplex[hi] = r, fv[hi] = fr;
      } else if (fr < fv[second]) {
        simplex[hi] = r, fv[hi] = fr;
      } else {
        const std::vector<double> k = along(fr < fv[hi] ? -0.5 : 0.5);
        const double fk = f(k);
        if (fk < std::min(fr, fv[hi])) {
          simplex[hi] = k, fv[hi] = fk;
        } else {  // shrink towards the best
          for (size_t j = 0; j <= n; ++j) {
            if (j == lo) continue;
            for (size_t q = 0; q < n; ++q) simplex[j][q] = simplex[lo][q] + 0.5 * (simplex[j][q] - simplex[lo][q]);
            fv[j] = f(simplex[j]);
          }
        }
      }
    }
    size_t best = 0;
    for (size_t j = 1; j <= n; ++j)
      if (fv[j] < fv[best]) best = j;
    if (fv[best] < start_value) {
      theta_ = at(simplex[best]);
      return fv[best];
    }
    return start_value;
  }

  double line_search(size_t i) {
    constexpr double kPhi = 0.6180339887498949;
    double a = kLogLo, b = kLogHi;
    std::vector<double> th = theta_;
    auto f = [&](double x) {
      th[i] = x;
      return objective(th);
    };
    double c = b - kPhi * (b - a), d = a + kPhi * (b - a);
    double fc = f(c), fd = f(d);
    for (int it = 0; it < 60 && b - a > 1e-9; ++it) {
      if (fc < fd) {
        b = d, d = c, fd = fc;
        c = b - kPhi * (b - a);
        fc = f(c);
      } else {
        a = c, c = d, fc = fd;
        d = a + kPhi * (b - a);
        fd = f(d);
      }
    }
    const double x = (a + b) / 2, fx = f(x), current = f(theta_[i]);
    if (fx < current) {
      theta_[i] = x;
      return fx;
    }
    return current;
  }
};

}  // namespace

bool OpFeature::operator<(const OpFeature& o) const {
  return std::tie(cls, path, flops, bytes, share) < std::tie(o.cls, o.path, o.flops, o.bytes, o.share);
}

PointModel point_model(const Graph& g, const RooflineCostModel& roofline) {
  PointModel m;
  const GpuSpec& spec = roofline.spec();
  for (MathPath p : kPaths) m.peak[static_cast<size_t>(p)] = path_peak(spec, p);
  m.hbm = spec.hbm_bandwidth;
  std::map<OpFeature, double> counts;
  for (const Op& op : g.ops()) {
    const double bytes = static_cast<double>(op.bytes_read) + static_cast<double>(op.bytes_written);
    if (op.flops <= 0 && bytes <= 0) continue;  // a view: no kernel
    OpFeature f;
    f.cls = op_class(op);
    f.path = math_path(spec, g, op);
    f.flops = op.flops;
    f.bytes = bytes;
    f.share = roofline.sm_fraction(g, op);
    counts[f] += 1;
    m.kernels += 1;
  }
  for (const auto& [key, n] : counts) {
    OpFeature f = key;
    f.count = n;
    m.ops.push_back(f);
  }
  return m;
}

double predict_ns(const PointModel& m, const ClassEfficiencies& e, const RegressionSetup& s) {
  double sec = 0;
  for (const OpFeature& op : m.ops) sec += op_seconds(op, m, e, s) * op.count;
  return sec * 1e9 + m.kernels * s.kernel_fixed_ns;
}

RegressedEfficiencies regress_efficiencies(const std::vector<const PointModel*>& models, const std::vector<double>& measured_ns,
                                    const RegressionSetup& s) {
  return Fitter(models, measured_ns, s).run();
}

std::vector<std::pair<std::string, double>> regressed_parameters(const RegressedEfficiencies& f) {
  std::vector<std::pair<std::string, double>> out;
  constexpr MathPath paths[] = {MathPath::CudaCore, MathPath::Tf32, MathPath::Fp16, MathPath::Bf16};
  for (size_t i = 0; i < compute_classes().size(); ++i)
    for (MathPath p : paths) {
      const double v = f.classes.compute[i][static_cast<size_t>(p)];
      if (v > 0) out.emplace_back(ClassEfficiencies::compute_key(compute_classes()[i], p), v);
    }
  for (size_t j = 0; j < memory_classes().size(); ++j)
    if (f.classes.memory[j] > 0) out.emplace_back(ClassEfficiencies::memory_key(memory_classes()[j]), f.classes.memory[j]);
  return out;
}

}  // namespace dlsim
