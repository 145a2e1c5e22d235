#include "validate/gpu/cuda/selftest.h"

#include <cmath>
#include <iomanip>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/kernels.h"
#include "validate/gpu/cuda/selftest_conv.h"

namespace dlsim::cuda {

namespace {

constexpr double kTolerance = 1e-5;

// A device copy of a host vector of floats, freed at scope exit.
struct Dev {
  float* p = nullptr;
  size_t n = 0;
  explicit Dev(const std::vector<float>& h) : n(h.size()) {
    DLSIM_CK(cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(float)), "selftest");
    DLSIM_CK(cudaMemcpy(p, h.data(), n * sizeof(float), cudaMemcpyHostToDevice), "selftest");
  }
  explicit Dev(size_t count) : Dev(std::vector<float>(count, std::numeric_limits<float>::quiet_NaN())) {}
  ~Dev() { cudaFree(p); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  std::vector<float> get() const {
    std::vector<float> h(n);
    DLSIM_CK(cudaDeviceSynchronize(), "selftest");
    DLSIM_CK(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), "selftest");
    return h;
  }
  Buf buf() const { return Buf{p, false}; }
};

std::vector<float> random(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng) + (u(rng) > 0 ? 1e-3f : -1e-3f);  // never exactly zero
  return v;
}

// ||got - ref|| / ||ref||; NaN (an unwritten or poisoned element) makes it infinite.
double rel_error(const std::vector<float>& got, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) return std::numeric_limits<double>::infinity();
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

struct Report {
  std::ostream& out;
  int failed = 0;
  void operator()(const std::string& name, double err, double tolerance = kTolerance) {
    const bool ok = err < tolerance;
    failed += !ok;
    out << (ok ? "  ok    " : "  FAIL  ") << std::left << std::setw(48) << name << std::right << " rel. error "
        << std::scientific << std::setprecision(2) << err;
    if (tolerance != kTolerance) out << " (tolerance " << tolerance << ")";
    out << std::defaultfloat << "\n";
  }
};

void column_sums_case(Report& report, std::mt19937_64& rng, int64_t rows, int64_t cols) {
  const std::vector<float> dy = random(static_cast<size_t>(rows * cols), rng);
  std::vector<double> ref(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) ref[static_cast<size_t>(c)] += dy[static_cast<size_t>(r * cols + c)];
  Dev d_dy(dy), d_db(static_cast<size_t>(cols));
  bias_grad(d_dy.buf(), d_db.buf(), rows, cols, nullptr, "selftest bias_grad");
  report("bias_grad " + std::to_string(rows) + "x" + std::to_string(cols), rel_error(d_db.get(), ref));
}

void layer_norm_case(Report& report, std::mt19937_64& rng, int64_t rows, int64_t cols) {
  const std::string shape = " " + std::to_string(rows) + "x" + std::to_string(cols);
  const size_t n = static_cast<size_t>(rows * cols);
  const std::vector<float> x = random(n, rng), gamma = random(static_cast<size_t>(cols), rng),
                           beta = random(static_cast<size_t>(cols), rng), dy = random(n, rng);
  std::vector<double> y(n), mean(static_cast<size_t>(rows)), rstd(static_cast<size_t>(rows)), dx(n);
  std::vector<double> dgamma(static_cast<size_t>(cols), 0.0), dbeta(static_cast<size_t>(cols), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0, s2 = 0;
    for (int64_t c = 0; c < cols; ++c) s += x[static_cast<size_t>(r * cols + c)];
    const double mu = s / static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const double d = x[static_cast<size_t>(r * cols + c)] - mu;
      s2 += d * d;
    }
    const double rs = 1.0 / std::sqrt(s2 / static_cast<double>(cols) + 1e-5);
    mean[static_cast<size_t>(r)] = mu, rstd[static_cast<size_t>(r)] = rs;
    double a = 0, b = 0;
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      const double xh = (x[i] - mu) * rs, g = dy[i] * gamma[static_cast<size_t>(c)];
      y[i] = xh * gamma[static_cast<size_t>(c)] + beta[static_cast<size_t>(c)];
      a += g, b += g * xh;
      dgamma[static_cast<size_t>(c)] += dy[i] * xh;
      dbeta[static_cast<size_t>(c)] += dy[i];
    }
    a /= static_cast<double>(cols), b /= static_cast<double>(cols);
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      dx[i] = rs * (dy[i] * gamma[static_cast<size_t>(c)] - a - (x[i] - mu) * rs * b);
    }
  }
  Dev d_x(x), d_g(gamma), d_b(beta), d_dy(dy), d_y(n), d_mean(static_cast<size_t>(rows)), d_rstd(static_cast<size_t>(rows));
  layer_norm(d_x.buf(), d_g.p, d_b.p, d_y.buf(), d_mean.p, d_rstd.p, rows, cols, nullptr, "selftest layer_norm");
  report("layer_norm y" + shape, rel_error(d_y.get(), y));
  report("layer_norm mean" + shape, rel_error(d_mean.get(), mean));
  report("layer_norm rstd" + shape, rel_error(d_rstd.get(), rstd));
  // The backward kernels read the device's own mean and rstd, as in a training step.
  Dev d_dx(n), d_dg(static_cast<size_t>(cols)), d_db(static_cast<size_t>(cols));
  layer_norm_backward(d_x.buf(), d_dy.buf(), d_g.p, d_mean.p, d_rstd.p, d_dx.buf(), rows, cols, nullptr, "selftest");
  report("layer_norm_backward dx" + shape, rel_error(d_dx.get(), dx));
  layer_norm_param_grad(d_x.buf(), d_dy.buf(), d_mean.p, d_rstd.p, d_dg.p, d_db.p, rows, cols, nullptr, "selftest");
  report("layer_norm_param_grad dgamma" + shape, rel_error(d_dg.get(), dgamma));
  report("layer_norm_param_grad dbeta" + shape, rel_error(d_db.get(), dbeta));
}

void optimizer_case(Report& report, std::mt19937_64& rng, size_t n) {
  const std::vector<float> w = random(n, rng), g = random(n, rng), m = random(n, rng), v0 = random(n, rng);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::abs(v0[i]);  // a second moment is never negative
  std::vector<double> sw(n), sm(n), aw(n), am(n), av(n);
  for (size_t i = 0; i < n; ++i) {  // the kernels' constants (kernels.cu)
    const double d = g[i] + 1e-4 * w[i];
    sm[i] = 0.9 * m[i] + d;
    sw[i] = w[i] - 0.1 * sm[i];
    am[i] = 0.9 * m[i] + 0.1 * g[i];
    av[i] = 0.999 * v[i] + 0.001 * static_cast<double>(g[i]) * g[i];
    aw[i] = w[i] - 1e-3 * am[i] / (std::sqrt(av[i]) + 1e-8);
  }
  Dev dw(w), dg(g), dm(m);
  sgd_momentum(dw.p, dg.p, dm.p, static_cast<int64_t>(n), nullptr, "selftest sgd");
  report("sgd_momentum w", rel_error(dw.get(), sw));
  report("sgd_momentum momentum", rel_error(dm.get(), sm));
  Dev aw_d(w), ag_d(g), am_d(m), av_d(v);
  adam(aw_d.p, ag_d.p, am_d.p, av_d.p, static_cast<int64_t>(n), nullptr, "selftest adam");
  report("adam w", rel_error(aw_d.get(), aw));
  report("adam v", rel_error(av_d.get(), av));
}

}  // namespace

int run_selftest(std::ostream& out) {
  DLSIM_CK(cudaSetDevice(0), "");
  std::mt19937_64 rng(20261123);
  Report report{out};
  out << "dlsim-cuda selftest: our kernels against float64 CPU references (pass: relative error < " << kTolerance
      << ")\n";
  for (auto [r, c] : {std::pair<int64_t, int64_t>{2048, 768}, {2048, 3072}, {37, 33}, {1, 1000}, {70000, 5}})
    column_sums_case(report, rng, r, c);
  for (auto [r, c] : {std::pair<int64_t, int64_t>{2048, 768}, {5, 1000}, {300, 33}}) layer_norm_case(report, rng, r, c);
  optimizer_case(report, rng, 100003);
  out << "cuDNN convolutions as runs issue them, legacy and graph API (tolerances: selftest_conv.h)\n";
  run_conv_selftest([&](const std::string& name, const std::vector<float>& got, const std::vector<double>& ref,
                        double tol) { report(name, rel_error(got, ref), tol); });
  out << (report.failed ? std::to_string(report.failed) + " case(s) FAILED\n" : "all passed\n");
  return report.failed;
}

}  // namespace dlsim::cuda
