#include "validate/calibrate/kernel_fit/kernel_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include "common/strings.h"
#include "hw/fitted/kernel_terms.h"

namespace dlsim {
namespace {

constexpr size_t kMaxTerms = 14;
constexpr int kReweightRounds = 40;
// IRLS weight floor: a sample predicted within 1 % counts as if it were 1 % off (keeps the weights finite).
constexpr double kLeastRelativeError = 0.01;

using TermRow = std::array<double, kMaxTerms>;

// The columns a class's coefficients multiply: 1, F, F*q, B (memory-bound: 1 and B in slots 0 and 3), and the
// event-timed samples' dispatch (slot 4: 1 for an event-timed sample, used only where the class has both kinds),
// batch norm's per-channel terms, forward kernels' (slot 5) and backward kernels' (slot 6), and layer norm's per-row
// terms, forward (slot 7) and backward (slot 8), a layer-norm or pool backward's bytes (slot 9, in place of slot 3),
// a windowed pool's windows' reads, forward (slot 10) and backward (slot 11), a concatenation's idle blocks per SM
// (slot 12) and a multi-tensor launch's largest chunk (slot 13). The fixed cost's column is the launches a shape
// stands for (1 for every sample: a trace's multi-tensor samples are one launch each).
TermRow term_row(const FitSample& s, const GpuSpec& spec, const FittedKernels& settings) {
  const KernelTerms t = kernel_terms(s.shape, spec, settings);
  return {t.launches,   t.flop_us,        t.flop_us * t.wave, t.byte_us,    s.device_timed ? 0.0 : 1.0,
          t.channel_us, t.channel_bwd_us, t.row_us,           t.row_bwd_us, t.byte_bwd_us,
          t.window_us,  t.window_bwd_us,  t.input_us,         t.chunk_us};
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Solves the normal equations A x = b (n <= kMaxTerms) by Gaussian elimination with partial pivoting; false when singular.
bool solve_small(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    if (!(std::abs(a[pivot][col]) > 1e-300)) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (size_t r = col + 1; r < n; ++r) {
      const double f = a[r][col] / a[col][col];
      for (size_t c = col; c < n; ++c) a[r][c] -= f * a[col][c];
      b[r] -= f * b[col];
    }
  }
  x.assign(n, 0.0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t c = i + 1; c < n; ++c) s -= a[i][c] * x[c];
    x[i] = s / a[i][i];
  }
  return true;
}

// Non-negative weighted least squares over the terms in `allowed`: min sum w_i (row_i . x - y_i)^2, x >= 0.
// Exact: the optimum is the unconstrained solution on its own support, which is feasible, and every feasible
// subset solution is a feasible point, so the best feasible subset solution is the optimum. Columns are scaled
// to unit weighted norm before solving.
TermRow nnls_subsets(const std::vector<TermRow>& rows, const std::vector<double>& y, const std::vector<double>& w,
                     const std::array<bool, kMaxTerms>& allowed) {
  std::array<double, kMaxTerms> scale{};
  for (size_t j = 0; j < kMaxTerms; ++j) {
    double s = 0;
    for (size_t i = 0; i < rows.size(); ++i) s += w[i] * rows[i][j] * rows[i][j];
    scale[j] = s > 0 ? std::sqrt(s) : 0;
  }
  TermRow best{};
  double best_sse = -1;
  for (unsigned mask = 1; mask < (1u << kMaxTerms); ++mask) {
    std::vector<size_t> cols;
    bool ok = true;
    for (size_t j = 0; j < kMaxTerms; ++j)
      if (mask & (1u << j)) {
        ok = ok && allowed[j] && scale[j] > 0;
        cols.push_back(j);
      }
    if (!ok) continue;
    const size_t n = cols.size();
    std::vector<std::vector<double>> ata(n, std::vector<double>(n, 0.0));
    std::vector<double> atb(n, 0.0);
    for (size_t i = 0; i < rows.size(); ++i)
      for (size_t a = 0; a < n; ++a) {
        const double va = rows[i][cols[a]] / scale[cols[a]];
        atb[a] += w[i] * va * y[i];
        for (size_t b = 0; b < n; ++b) ata[a][b] += w[i] * va * rows[i][cols[b]] / scale[cols[b]];
      }
    std::vector<double> x;
    if (!solve_small(ata, atb, x)) continue;
    TermRow coef{};
    for (size_t a = 0; a < n; ++a) {
      if (x[a] < 0) ok = false;
      coef[cols[a]] = x[a] / scale[cols[a]];
    }
    if (!ok) continue;
    double sse = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      double p = 0;
      for (size_t j = 0; j < kMaxTerms; ++j) p += rows[i][j] * coef[j];
      sse += w[i] * (p - y[i]) * (p - y[i]);
    }
    if (best_sse < 0 || sse < best_sse) {
      best_sse = sse;
      best = coef;
    }
  }
  return best;
}

// Whether the samples of one direction (backward or not) that have rows differ in rows per byte by more than 1 %
// (term slot `slot`: their rows over the SMs; slots 3 and 9: their bytes over the bandwidth).
bool rows_per_byte_differ(const std::vector<TermRow>& rows, const std::vector<const FitSample*>& samples,
                          bool backward, size_t slot) {
  double lo = 0, hi = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double bytes = rows[i][3] + rows[i][9];  // a layer-norm backward's are in slot 9
    if (samples[i]->shape.backward != backward || !(rows[i][slot] > 0) || !(bytes > 0)) continue;
    const double r = rows[i][slot] / bytes;
    lo = lo > 0 ? std::min(lo, r) : r;
    hi = std::max(hi, r);
  }
  return lo > 0 && hi > lo * 1.01;
}

// Whether every term row is the same: samples of one shape and one timing kind.
bool all_rows_equal(const std::vector<TermRow>& rows) {
  return !rows.empty() && std::all_of(rows.begin(), rows.end(), [&](const TermRow& r) { return r == rows.front(); });
}

bool one_shape(const std::vector<const FitSample*>& samples, const GpuSpec& spec, const FittedKernels& settings) {
  std::vector<TermRow> rows;
  for (const FitSample* s : samples) rows.push_back(term_row(*s, spec, settings));
  return all_rows_equal(rows);
}

// Whether any sample has a value in column `slot`.
bool column_used(const std::vector<TermRow>& rows, size_t slot) {
  return std::any_of(rows.begin(), rows.end(), [&](const TermRow& r) { return r[slot] > 0; });
}

// A term fitted forward and backward apart (slots `fwd` and `bwd`) whose samples are all backward ones (no sweep
// record of the class): one coefficient for both, the forward's.
void backward_only_to_forward(std::vector<TermRow>& rows, size_t fwd, size_t bwd, bool& has_fwd, bool& has_bwd) {
  if (!has_bwd || has_fwd) return;
  for (TermRow& r : rows) std::swap(r[fwd], r[bwd]);
  std::swap(has_fwd, has_bwd);
}

}  // namespace

FittedKernelClass fit_kernel_class(const std::vector<const FitSample*>& samples, const GpuSpec& spec,
                                   const FittedKernels& settings, double* dispatch_us) {
  std::vector<TermRow> rows;
  std::vector<double> y, w;
  for (const FitSample* s : samples) {
    rows.push_back(term_row(*s, spec, settings));
    y.push_back(s->us);
    w.push_back(s->weight / (s->us * s->us));  // relative errors
  }
  const bool memory = !samples.empty() && is_memory_family(samples.front()->shape.family);
  bool device = false, events = false;
  for (const FitSample* s : samples) (s->device_timed ? device : events) = true;
  bool channels = false, channels_bwd = false;
  for (const FitSample* s : samples) {
    channels = channels || (s->shape.channels > 0 && !s->shape.backward);
    channels_bwd = channels_bwd || (s->shape.channels > 0 && s->shape.backward);
  }
  backward_only_to_forward(rows, 5, 6, channels, channels_bwd);
  // Layer norm's rows, the same way; a per-row term only where the samples' rows per byte differ (rows of several
  // widths): over rows of one width (a sweep's) it is the byte term again, and the fit could not tell them apart.
  const bool per_row = rows_per_byte_differ(rows, samples, false, 7);
  const bool per_row_bwd = rows_per_byte_differ(rows, samples, true, 8);
  // Where only one direction's rows differ, one coefficient for both (a backward takes row_scale where the class
  // has no row_bwd_scale: kernel_terms.h).
  if (per_row != per_row_bwd)
    for (TermRow& r : rows) {
      r[7] += r[8];
      r[8] = 0;
    }
  // A layer-norm backward's bytes: a coefficient of their own where forward samples fit byte_scale, else byte_scale.
  const bool bytes_fwd = column_used(rows, 3), bytes_bwd = column_used(rows, 9);
  if (!bytes_fwd)
    for (TermRow& r : rows) std::swap(r[3], r[9]);
  // A pool's windows, as the channels.
  bool window = column_used(rows, 10), window_bwd = column_used(rows, 11);
  backward_only_to_forward(rows, 10, 11, window, window_bwd);
  // A concatenation's idle blocks and a multi-tensor launch's largest chunk: terms where the samples have them
  // (concat and multi_tensor classes; a sweep has neither, trace_samples.h).
  const bool input_blocks = column_used(rows, 12), chunks = column_used(rows, 13);
  std::array<bool, kMaxTerms> allowed = {true,     !memory,  !memory, true, device && events, channels, channels_bwd,
                                         per_row || per_row_bwd, per_row && per_row_bwd, bytes_fwd && bytes_bwd,
                                         window, window_bwd, input_blocks, chunks};
  // Samples of one shape alone (every term row the same: ViT's fp32 attention, the one shape any trace holds)
  // cannot tell a fixed cost from a rate, and every single term fits them exactly; the class then takes their
  // time as a rate over the work (flop_scale, or byte_scale for a memory-bound class), so that another shape is
  // priced by its flops or bytes rather than at this shape's time.
  if (all_rows_equal(rows))
    allowed = {false, !memory, false, memory, false, false, false, false, false, false, false, false, false, false};
  TermRow coef{};
  for (int round = 0; round < kReweightRounds; ++round) {
    coef = nnls_subsets(rows, y, w, allowed);
    // Reweight for the absolute relative error: weight / max(|relative error|, 1 %).
    for (size_t i = 0; i < rows.size(); ++i) {
      double p = 0;
      for (size_t j = 0; j < kMaxTerms; ++j) p += rows[i][j] * coef[j];
      const double rel = std::abs(p - y[i]) / y[i];
      w[i] = samples[i]->weight / (y[i] * y[i] * std::max(rel, kLeastRelativeError));
    }
  }
  FittedKernelClass c;
  c.fixed_us = coef[0];
  c.flop_scale = coef[1];
  c.wave_scale = coef[2];
  c.byte_scale = coef[3];
  c.channel_scale = coef[5];
  c.channel_bwd_scale = coef[6];
  c.row_scale = coef[7];
  c.row_bwd_scale = coef[8];
  c.byte_bwd_scale = coef[9];
  c.window_scale = coef[10];
  c.window_bwd_scale = coef[11];
  c.input_scale = coef[12];
  c.chunk_scale = coef[13];
  c.records = static_cast<int64_t>(samples.size());
  if (dispatch_us) *dispatch_us = coef[4];
  return c;
}

FittedKernels fit_kernel_classes(const std::vector<FitSample>& samples, const GpuSpec& spec,
                                 const FittedKernels& settings, std::vector<std::string>& notes) {
  std::map<std::string, std::vector<const FitSample*>> by_class;
  bool any_device = false, any_events = false;
  for (const FitSample& s : samples) {
    by_class[s.cls].push_back(&s);
    (s.device_timed ? any_device : any_events) = true;
  }
  std::vector<double> dispatches;         // the dispatch terms of classes fitted to both timings
  std::vector<std::string> event_only;    // classes with event-timed samples alone
  FittedKernels f;
  f.tile = settings.tile;
  f.min_split_k = settings.min_split_k;
  for (const auto& [cls, members] : by_class) {
    if (members.size() < kMinSamplesPerClass) {
      // One coefficient, a rate over the work, is all that samples of one shape determine (fit_kernel_class), and
      // one sample determines it as well as four: the kernels of the class's own family at its own rate price a
      // shape better than a fallback class of other kernels does (cuDNN's grouped 7x7 depthwise filter gradients,
      // one shape in the H200's sweeps, take over a hundred times its depthwise class's time per flop).
      if (!one_shape(members, spec, settings)) {
        notes.push_back("class " + cls + ": " + std::to_string(members.size()) + " sample(s) of several shapes, " +
                        "fewer than " + std::to_string(kMinSamplesPerClass) +
                        ": not fitted (its ops keep the roofline)");
        continue;
      }
      notes.push_back("class " + cls + ": " + std::to_string(members.size()) + " sample(s) of one shape: fitted " +
                      "as a rate over its work");
    }
    double dispatch = 0;
    f.classes[cls] = fit_kernel_class(members, spec, settings, &dispatch);
    bool device = false;
    for (const FitSample* s : members) device = device || s->device_timed;
    if (device && dispatch > 0) dispatches.push_back(dispatch);
    if (!device) event_only.push_back(cls);
  }
  if (!(any_device && any_events)) return f;
  const double dispatch = dispatches.empty() ? 0 : median_of(dispatches);
  for (const std::string& cls : event_only) {
    FittedKernelClass& c = f.classes.at(cls);
    const double device_fixed = std::max(0.0, c.fixed_us - dispatch);
    notes.push_back("class " + cls + ": no device-timed sample; its fixed_us " + fixed(c.fixed_us, 2) +
                    " us less the median dispatch of " + std::to_string(dispatches.size()) + " classes fitted to "
                    "both timings (" + fixed(dispatch, 2) + " us): " + fixed(device_fixed, 2) + " us");
    c.fixed_us = device_fixed;
  }
  return f;
}

}  // namespace dlsim
