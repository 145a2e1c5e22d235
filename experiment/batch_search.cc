#include "experiment/batch_search.h"

#include <algorithm>
#include <cmath>

#include "common/config_error.h"
#include "policies/swap/core/swap_policy.h"

namespace dlsim {

namespace {
bool fits(const ExperimentResult& r) { return !r.oom && r.iterations_run == r.experiment.iterations; }
}  // namespace

FitResult find_max_batch(const Experiment& e, const RunFn& run, int64_t batch_cap) {
  FitResult f;
  auto probe = [&](int64_t b) {
    Experiment x = e;
    x.batch = b;
    ExperimentResult r = run(x);
    r.experiment = x;
    const bool ok = fits(r);
    f.probes.push_back({b, ok});
    if (ok && b > f.max_batch) {
      f.max_batch = b;
      f.at_max = r;
    }
    return ok;
  };
  int64_t lo = 0, hi = 0;  // lo fits (0: none known), hi does not (0: none known)
  int64_t b = std::min(e.batch, batch_cap);
  if (probe(b)) {
    lo = b;
    while (lo < batch_cap) {
      const int64_t next = std::min(lo * 2, batch_cap);
      if (!probe(next)) {
        hi = next;
        break;
      }
      lo = next;
    }
    if (hi == 0) return f;  // fits at the cap
  } else {
    hi = b;
    while (hi > 1) {
      const int64_t next = hi / 2;
      if (probe(next)) {
        lo = next;
        break;
      }
      hi = next;
    }
    if (lo == 0) return f;  // not even batch 1
  }
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (probe(mid)) lo = mid;
    else hi = mid;
  }
  return f;
}

std::vector<MemoryAtOverhead> memory_at_overhead(const Experiment& e, const std::vector<double>& bounds,
                                                 const RunFn& run) {
  const auto& entry = swap_registry().get(e.swap.name);
  const bool has_limit = std::any_of(entry.params.begin(), entry.params.end(), [](const ParamSpec& s) { return s.name == "limit_fraction"; });
  if (!has_limit)
    throw ConfigError(e.file, e.swap.line, "swap",
                      "--memory-at-overhead needs a swap policy that takes limit_fraction (singa, fastest-under-limit, "
                      "swapadvisor); '" + e.swap.name + "' does not");
  std::vector<MemoryAtOverhead> out;
  for (double b : bounds) out.push_back({b});
  for (int step = 20; step >= 1; --step) {
    Experiment x = e;
    x.swap.params.set("limit_fraction", step / 20.0);
    x.swap.params.set("limit_mb", int64_t{0});
    ExperimentResult r = run(x);
    if (r.oom || r.swap.empty() || !r.swap.value("swap_limit_met", false) || !r.swap.contains("overhead")) break;  // out of reach
    const double ov = r.swap["overhead"].get<double>();
    for (MemoryAtOverhead& m : out)
      if (ov <= m.max_overhead && (!m.found || r.peak_live_bytes < m.peak_live_bytes))
        m = {m.max_overhead, true, step / 20.0, r.peak_live_bytes, r.peak_reserved_bytes, ov};
  }
  return out;
}

nlohmann::json to_json(const FitResult& f, const std::vector<MemoryAtOverhead>& m) {
  nlohmann::json j;
  j["max_batch"] = f.max_batch;
  if (f.max_batch > 0) {
    j["iteration_time_us"] = f.at_max.iteration_time_us;
    j["peak_reserved_bytes"] = f.at_max.peak_reserved_bytes;
    j["peak_live_bytes"] = f.at_max.peak_live_bytes;
    j["samples_per_s"] = f.at_max.iteration_time_us > 0 ? static_cast<double>(f.max_batch) * 1e6 / f.at_max.iteration_time_us : 0.0;
  }
  nlohmann::json probes = nlohmann::json::array();
  for (auto [b, ok] : f.probes) probes.push_back({{"batch", b}, {"fits", ok}});
  j["probes"] = probes;
  if (!m.empty()) {
    nlohmann::json a = nlohmann::json::array();
    for (const MemoryAtOverhead& x : m) {
      nlohmann::json r = {{"max_overhead", x.max_overhead}, {"found", x.found}};
      if (x.found) {
        r["limit_fraction"] = x.limit_fraction;
        r["peak_live_bytes"] = x.peak_live_bytes;
        r["peak_reserved_bytes"] = x.peak_reserved_bytes;
        r["overhead"] = x.overhead;
      }
      a.push_back(r);
    }
    j["memory_at_overhead"] = a;
  }
  return j;
}

}  // namespace dlsim
