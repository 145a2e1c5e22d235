#include "validate/calibrate/compare.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "common/strings.h"

namespace dlsim {

namespace {

// Percent error against a measured figure that must be positive (callers leave the others out).
double ape(double sim, double real) { return std::abs(sim - real) / real * 100.0; }

std::optional<double> mean(double sum, size_t n) {
  return n ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt;
}

// "12.3 %", or "n/a" for a figure with nothing to compare.
std::string percent(const std::optional<double>& v) {
  if (!v) return "n/a";
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << *v << " %";
  return o.str();
}

nlohmann::json json_or_null(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::map<OpId, double> mean_op_durations(const Trace& t) {
  std::map<OpId, std::pair<double, int>> acc;
  for (const OpRecord& r : t.ops)
    if (r.iteration >= 0) {
      auto& a = acc[r.op];
      a.first += static_cast<double>(r.end - r.start);
      ++a.second;
    }
  std::map<OpId, double> m;
  for (const auto& [op, a] : acc) m[op] = a.first / a.second;
  return m;
}

uint64_t peak_reserved(const Trace& t) {
  uint64_t p = 0;
  for (const MemRecord& m : t.mem) p = std::max(p, m.reserved_after);
  return p;
}

}  // namespace

std::vector<double> iteration_durations(const Trace& t) {
  std::vector<double> d;
  for (size_t i = 0; i < t.iterations.size(); ++i) {
    TimeNs from = t.iterations[i].start;
    if (i > 0) from = std::max(from, t.iterations[i - 1].end);
    d.push_back(static_cast<double>(t.iterations[i].end - from));
  }
  return d;
}

void number_as_measured(Trace& t, int warmup) {
  if (warmup <= 0) return;
  const int total = static_cast<int>(t.iterations.size());
  auto renumber = [&](int& it) {
    if (it < 0) return;  // setup (-1)
    it = it < warmup ? -2 : it - warmup;  // teardown, numbered after the last iteration, shifts with the rest
  };
  for (auto& r : t.ops) renumber(r.iteration);
  for (auto& r : t.copies) renumber(r.iteration);
  for (auto& r : t.mem) renumber(r.iteration);
  // The first measured iteration starts no earlier than the last warm-up one ended: that end is the only
  // thing iteration_durations() needs of the records being dropped.
  if (warmup < total && warmup > 0)
    t.iterations[static_cast<size_t>(warmup)].start =
        std::max(t.iterations[static_cast<size_t>(warmup)].start, t.iterations[static_cast<size_t>(warmup) - 1].end);
  t.iterations.erase(t.iterations.begin(), t.iterations.begin() + std::min(warmup, total));
}

Comparison compare_traces(const Trace& sim, const Trace& real, const Graph& g) {
  Comparison c;
  c.sim_oom = sim.oom;
  c.real_oom = real.oom;
  const auto s = mean_op_durations(sim), r = mean_op_durations(real);
  double sum = 0;
  for (const auto& [op, real_ns] : r) {
    auto it = s.find(op);
    if (it == s.end() || op < 0 || static_cast<size_t>(op) >= g.ops().size()) continue;
    if (!(real_ns > 0)) {
      ++c.ops_not_comparable;
      continue;
    }
    OpError e{op, g.op(op).name, to_string(g.op(op).kind), it->second, real_ns, ape(it->second, real_ns)};
    sum += e.ape;
    c.ops.push_back(e);
  }
  c.op_mape = mean(sum, c.ops.size());
  sum = 0;
  const std::vector<double> sd = iteration_durations(sim), rd = iteration_durations(real);
  const size_t n = std::min(sd.size(), rd.size());
  for (size_t i = 0; i < n; ++i) {
    const double sn = sd[i], rn = rd[i];
    if (!(rn > 0)) {
      ++c.iterations_not_comparable;
      continue;
    }
    c.iterations.push_back({static_cast<int>(i), sn, rn, ape(sn, rn)});
    sum += c.iterations.back().ape;
  }
  c.iteration_mape = mean(sum, c.iterations.size());
  c.sim_peak_reserved = peak_reserved(sim);
  c.real_peak_reserved = peak_reserved(real);
  if (c.real_peak_reserved)
    c.peak_reserved_error = (static_cast<double>(c.sim_peak_reserved) - static_cast<double>(c.real_peak_reserved)) /
                            static_cast<double>(c.real_peak_reserved) * 100.0;
  for (bool to_host : {true, false}) {
    CopyError e;
    e.to_host = to_host;
    double ss = 0, rs = 0;
    for (const CopyRecord& x : sim.copies)
      if (x.to_host == to_host && x.iteration >= 0) ss += static_cast<double>(x.end - x.start), ++e.sim_count;
    for (const CopyRecord& x : real.copies)
      if (x.to_host == to_host && x.iteration >= 0) rs += static_cast<double>(x.end - x.start), ++e.real_count;
    if (e.sim_count + e.real_count == 0) continue;
    e.sim_mean_ns = e.sim_count ? ss / static_cast<double>(e.sim_count) : 0;
    e.real_mean_ns = e.real_count ? rs / static_cast<double>(e.real_count) : 0;
    if (e.real_mean_ns > 0) e.ape = ape(e.sim_mean_ns, e.real_mean_ns);
    c.copies.push_back(e);
  }
  return c;
}

void print_comparison(const Comparison& c, std::ostream& out, size_t top) {
  out << std::fixed << std::setprecision(1);
  out << "per-op MAPE:        " << percent(c.op_mape) << " over " << c.ops.size() << " ops";
  if (c.ops_not_comparable) out << " (" << c.ops_not_comparable << " not comparable: measured at 0 ns)";
  out << "\nper-iteration MAPE: " << percent(c.iteration_mape) << " over " << c.iterations.size() << " iterations";
  if (c.iterations_not_comparable) out << " (" << c.iterations_not_comparable << " not comparable: measured at 0 ns)";
  out << "\npeak reserved:      sim " << c.sim_peak_reserved << " B, real " << c.real_peak_reserved << " B, error "
      << percent(c.peak_reserved_error) << "\n";
  if (c.sim_oom || c.real_oom)
    out << "out of memory:      sim " << (c.sim_oom ? "yes" : "no") << ", real " << (c.real_oom ? "yes" : "no") << "\n";
  out << "\niteration  sim_us      real_us     err_%\n";
  for (const auto& i : c.iterations)
    out << std::setw(9) << i.iteration << "  " << std::setw(10) << i.sim_ns / 1e3 << "  " << std::setw(10)
        << i.real_ns / 1e3 << "  " << std::setw(6) << i.ape << "\n";
  if (!c.copies.empty()) {
    out << "\ncopies     n_sim  n_real  sim_mean_us  real_mean_us  err_%\n";
    for (const auto& e : c.copies)
      out << (e.to_host ? "d2h      " : "h2d      ") << std::setw(7) << e.sim_count << std::setw(8) << e.real_count
          << std::setw(13) << e.sim_mean_ns / 1e3 << std::setw(14) << e.real_mean_ns / 1e3 << std::setw(7)
          << (e.ape ? fixed(*e.ape, 1) : std::string("n/a")) << "\n";
  }
  std::vector<OpError> ops = c.ops;
  // Largest absolute error first (ties by op id) so the table shows where the model loses the most time.
  std::stable_sort(ops.begin(), ops.end(), [](const OpError& a, const OpError& b) {
    return std::abs(a.sim_ns - a.real_ns) > std::abs(b.sim_ns - b.real_ns);
  });
  if (top && ops.size() > top) ops.resize(top);
  out << "\nop     kind                 sim_us      real_us     err_%   name\n";
  for (const auto& e : ops)
    out << std::setw(5) << e.op << "  " << std::left << std::setw(19) << e.kind << std::right << std::setw(10)
        << e.sim_ns / 1e3 << "  " << std::setw(10) << e.real_ns / 1e3 << "  " << std::setw(6) << e.ape << "   "
        << e.name << "\n";
}

nlohmann::json comparison_to_json(const Comparison& c) {
  nlohmann::json j;
  j["op_mape"] = json_or_null(c.op_mape);
  j["ops_not_comparable"] = c.ops_not_comparable;
  j["iteration_mape"] = json_or_null(c.iteration_mape);
  j["iterations_not_comparable"] = c.iterations_not_comparable;
  j["sim_peak_reserved"] = c.sim_peak_reserved;
  j["real_peak_reserved"] = c.real_peak_reserved;
  j["peak_reserved_error_percent"] = json_or_null(c.peak_reserved_error);
  j["sim_oom"] = c.sim_oom;
  j["real_oom"] = c.real_oom;
  j["iterations"] = nlohmann::json::array();
  for (const auto& i : c.iterations)
    j["iterations"].push_back({{"iteration", i.iteration}, {"sim_ns", i.sim_ns}, {"real_ns", i.real_ns}, {"ape", i.ape}});
  j["copies"] = nlohmann::json::array();
  for (const auto& e : c.copies)
    j["copies"].push_back({{"direction", e.to_host ? "d2h" : "h2d"}, {"sim_count", e.sim_count},
                           {"real_count", e.real_count}, {"sim_mean_ns", e.sim_mean_ns},
                           {"real_mean_ns", e.real_mean_ns}, {"ape", json_or_null(e.ape)}});
  struct Kind {
    double sim = 0, real = 0, ape = 0;
    size_t n = 0;
  };
  std::map<std::string, Kind> kinds;
  j["ops"] = nlohmann::json::array();
  for (const auto& e : c.ops) {
    j["ops"].push_back({{"op", e.op}, {"name", e.name}, {"kind", e.kind}, {"sim_ns", e.sim_ns}, {"real_ns", e.real_ns},
                        {"ape", e.ape}});
    Kind& k = kinds[e.kind];
    k.sim += e.sim_ns, k.real += e.real_ns, k.ape += e.ape, ++k.n;
  }
  j["by_kind"] = nlohmann::json::object();
  for (const auto& [name, k] : kinds)
    j["by_kind"][name] = {{"ops", k.n}, {"sim_ns", k.sim}, {"real_ns", k.real}, {"mape", k.ape / static_cast<double>(k.n)}};
  return j;
}

}  // namespace dlsim
