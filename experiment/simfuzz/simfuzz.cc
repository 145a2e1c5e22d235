#include "experiment/simfuzz/simfuzz.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

#include "experiment/run_experiment.h"
#include "experiment/simfuzz/simfuzz_keys.h"
#include "sim/check/swap_plan_checker.h"
#include "experiment/swap_planning.h"
#include "common/config_error.h"
#include "policies/pool/pool_checker.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "sim/check/memory_reuse_check.h"
#include "workloads/training.h"

namespace dlsim {

const char* to_string(FuzzOutcome o) {
  switch (o) {
    case FuzzOutcome::Result: return "result";
    case FuzzOutcome::Oom: return "oom";
    case FuzzOutcome::Rejected: return "rejected";
    case FuzzOutcome::Violation: return "violation";
  }
  return "?";
}

namespace {

// A broken invariant found by the checks below (not by the code under test).
struct Violation : std::runtime_error {
  Violation(std::string category, const std::string& what) : std::runtime_error(what), category(std::move(category)) {}
  std::string category;
};

void require(bool ok, const char* category, const std::string& what) {
  if (!ok) throw Violation(category, what);
}

// What one simulation produced that must be the same when it runs again.
struct Figures {
  bool oom = false;
  int iterations = 0;
  std::vector<TimeNs> iteration_ns;
  uint64_t peak_live = 0, peak_reserved = 0, events = 0, mallocs = 0;
  bool operator==(const Figures&) const = default;
};

Figures simulate_checked(const FuzzCase& c, const FuzzRunOptions& options, FuzzRun& out) {
  const Experiment e = fuzz_experiment(c, options.file);
  // The key a sweep would file the case's row under: exact over every hw_override value, lists included.
  if (const auto why = check_sweep_key(e)) throw Violation("sweep key", *why);
  const TrainingOptions t = training_options(e);
  PreparedExperiment p = prepare_experiment(e, make_training_graph(build_fuzz_forward(c, t, e.batch), t));
  out.ops = p.graph.ops().size();

  VirtualDeviceMemory dev(p.hw.spec.memory_bytes, p.hw.spec.total_memory_bytes);
  CheckedPool pool(dev, [&](DeviceMemory& d) { return make_pool(e, d); });
  SimContext ctx{p.graph, p.hw.spec, *p.hw.kernels, *p.hw.link, pool, dev};
  SimOptions opt;
  opt.iterations = e.iterations;
  opt.record_trace = true;
  const RunResult r = simulate(p.program, ctx, opt);
  out.events = r.events_processed;

  // Times: never negative, every interval ends after it starts (a wrapped sum shows up here).
  require(r.total_ns >= 0, "time", "total time " + std::to_string(r.total_ns) + " ns is negative");
  for (TimeNs t_ns : r.iteration_ns) require(t_ns >= 0, "time", "an iteration took " + std::to_string(t_ns) + " ns");
  for (const OpRecord& o : r.trace.ops)
    require(o.start >= 0 && o.end >= o.start && o.end <= r.total_ns, "time",
            "op " + std::to_string(o.op) + " runs from " + std::to_string(o.start) + " to " + std::to_string(o.end) + " ns");
  for (const CopyRecord& cp : r.trace.copies)
    require(cp.start >= 0 && cp.end >= cp.start, "time",
            "a copy runs from " + std::to_string(cp.start) + " to " + std::to_string(cp.end) + " ns");
  // Memory: the pool's invariants over everything it holds, and it holds at least what is live.
  pool.check_now();
  uint64_t live = 0;
  for (const MemRecord& m : r.trace.mem) {
    if (m.action == MemAction::Alloc) live += m.bytes;
    else live -= std::min(live, m.bytes);
    require(m.reserved_after >= live, "reserved < live",
            "after the " + std::string(m.action == MemAction::Alloc ? "alloc" : "free") + " of tensor " +
                std::to_string(m.tensor) + " the pool holds " + std::to_string(m.reserved_after) + " bytes for " +
                std::to_string(live) + " live");
  }
  require(r.peak_reserved_bytes >= r.peak_live_bytes, "reserved < live",
          "peak reserved " + std::to_string(r.peak_reserved_bytes) + " < peak live " + std::to_string(r.peak_live_bytes));
  if (!r.trace.oom) {
    require(r.iterations_completed == e.iterations, "iterations",
            std::to_string(r.iterations_completed) + " of " + std::to_string(e.iterations) + " iterations completed without an OOM");
    require(pool.live_blocks() == 0, "pool invariant",
            std::to_string(pool.live_blocks()) + " blocks still allocated after the teardown");
  }
  // Swaps: the independent checker reads only the Program and the trace.
  if (p.swap) {
    const nlohmann::json figures = swap_figures(*p.swap, p.graph, p.program, r.trace,
                                                static_cast<double>(r.steady_iteration_ns) / 1000.0, r.peak_live_bytes);
    const SwapCheck check = check_swapped_run(p.graph, p.program, r.trace, figures["pinned_host_bytes"].get<uint64_t>());
    require(check.ok(), "swap check", check.ok() ? "" : check.problems.front());
    // The flags read from rounded targets and bounds: a limit met, a bound that holds.
    if (const auto why = check_swap_flags(e, figures, r.peak_live_bytes)) throw Violation("swap figures", *why);
  }
  // Memory across streams: no device work on memory an earlier tensor's work still touches.
  const std::vector<std::string> races = check_memory_reuse(p.graph, p.program, r.trace);
  require(races.empty(), "memory reuse", races.empty() ? "" : races.front());
  Figures f;
  f.oom = r.trace.oom;
  f.iterations = r.iterations_completed;
  f.iteration_ns = r.iteration_ns;
  f.peak_live = r.peak_live_bytes;
  f.peak_reserved = r.peak_reserved_bytes;
  f.events = r.events_processed;
  f.mallocs = r.device_malloc_calls;
  out.outcome = f.oom ? FuzzOutcome::Oom : FuzzOutcome::Result;
  return f;
}

// The documented exceptions to "same inputs, same figures": solvers stopped by a wall-clock time limit. The
// optimal planner's placement under it depends on the machine's speed (its node_limit is the deterministic bound;
// found by the determinism check, seed 56912, time_limit_s of 4.6 us), and so does the plan of `checkmate`, whose
// CBC solve stops at time_limit_s (seed 30009736: 14 ms).
bool wall_clock_bound(const FuzzCase& c) {
  const YAML::Node& e = c.experiment;
  const YAML::Node pool = e["pool"], swap = e["swap"];
  const bool optimal = pool.IsMap() && pool["name"] && pool["name"].Scalar() == "planned" && pool["planner"] &&
                       pool["planner"].Scalar() == "optimal";
  const bool checkmate = (swap.IsScalar() && swap.Scalar() == "checkmate") ||
                         (swap.IsMap() && swap["name"] && swap["name"].Scalar() == "checkmate");
  return optimal || checkmate;
}

}  // namespace

FuzzRun run_fuzz_case(const FuzzCase& c, const FuzzRunOptions& options) {
  FuzzRun out;
  try {
    const Figures first = simulate_checked(c, options, out);
    if (options.check_determinism && !wall_clock_bound(c)) {
      FuzzRun again;
      require(simulate_checked(c, options, again) == first, "determinism", "the same case gave different figures");
    }
  } catch (const ConfigError& e) {
    out.outcome = FuzzOutcome::Rejected;
    out.message = e.what();
  } catch (const Violation& v) {
    out.outcome = FuzzOutcome::Violation;
    out.category = v.category;
    out.message = v.what();
  } catch (const PoolInvariantError& e) {
    out.outcome = FuzzOutcome::Violation;
    out.category = "pool invariant";
    out.message = e.what();
  } catch (const std::exception& e) {
    out.outcome = FuzzOutcome::Violation;
    out.category = "exception";
    out.message = e.what();
  }
  return out;
}

namespace {

// One shrinking pass over a list: ddmin's "remove a chunk" steps, chunks halving down to single elements.
template <class T>
bool shrink_list(std::vector<T>& v, const std::function<bool(const std::vector<T>&)>& fails, int& budget) {
  bool changed = false;
  for (size_t chunk = std::max<size_t>(1, v.size() / 2); chunk >= 1 && budget > 0; chunk /= 2) {
    for (size_t start = 0; start < v.size() && budget > 0;) {
      std::vector<T> candidate(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(start));
      candidate.insert(candidate.end(), v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), start + chunk)), v.end());
      --budget;
      if (fails(candidate)) {
        v = std::move(candidate);
        changed = true;
      } else {
        start += chunk;
      }
    }
    if (chunk == 1) break;
  }
  return changed;
}

// Every simplification of an experiment mapping one step away: a key dropped (hardware overrides, policy
// parameters, optional choices), a policy replaced by the simplest one, a number made smaller.
std::vector<YAML::Node> experiment_steps(const YAML::Node& e) {
  std::vector<YAML::Node> steps;
  auto with = [&](const std::function<void(YAML::Node&)>& edit) {
    YAML::Node c = YAML::Clone(e);
    edit(c);
    steps.push_back(c);
  };
  for (const char* key : {"optimizer", "precision", "tf32", "memory_format", "kernels", "hw_override"})
    if (e[key]) with([&](YAML::Node& c) { c.remove(key); });
  if (e["hw_override"] && e["hw_override"].IsMap())
    for (const auto& kv : e["hw_override"]) {
      const std::string k = kv.first.Scalar();
      with([&](YAML::Node& c) { c["hw_override"].remove(k); });
      if (kv.second.IsMap())
        for (const auto& inner : kv.second) {
          const std::string ik = inner.first.Scalar();
          with([&](YAML::Node& c) { c["hw_override"][k].remove(ik); });
        }
    }
  for (const char* policy : {"pool", "swap", "concurrency"}) {
    const YAML::Node p = e[policy];
    if (p && p.IsMap()) {
      with([&](YAML::Node& c) { c[policy] = p["name"].Scalar(); });
      for (const auto& kv : p) {
        const std::string k = kv.first.Scalar();
        if (k != "name") with([&](YAML::Node& c) { c[policy].remove(k); });
      }
    }
  }
  auto name_of = [&](const char* policy) { return e[policy].IsMap() ? e[policy]["name"].Scalar() : e[policy].Scalar(); };
  if (name_of("swap") != "none") with([](YAML::Node& c) { c["swap"] = "none"; });
  if (name_of("pool") != "cuda-malloc") with([](YAML::Node& c) { c["pool"] = "cuda-malloc"; });
  if (name_of("concurrency") != "serial") with([](YAML::Node& c) { c["concurrency"] = "serial"; });
  if (e["iterations"] && e["iterations"].as<int64_t>() > 1) with([](YAML::Node& c) { c["iterations"] = 1; });
  const int64_t batch = e["batch"] ? e["batch"].as<int64_t>() : 1;
  if (batch > 1) {
    with([](YAML::Node& c) { c["batch"] = 1; });
    with([&](YAML::Node& c) { c["batch"] = batch / 2; });
  }
  return steps;
}

std::vector<FuzzCase> case_steps(const FuzzCase& c) {
  std::vector<FuzzCase> steps;
  for (const YAML::Node& e : experiment_steps(c.experiment)) {
    FuzzCase s = c;
    s.experiment.reset(e);
    steps.push_back(s);
  }
  for (size_t i = 0; i < c.input_dims.size(); ++i)
    if (c.input_dims[i] > 1) {
      FuzzCase s = c;
      s.input_dims[i] = c.input_dims[i] / 2;
      steps.push_back(s);
    }
  if (c.classes > 2) {
    FuzzCase s = c;
    s.classes = 2;
    steps.push_back(s);
  }
  for (size_t i = 0; i < c.layers.size(); ++i)
    if (c.layers[i].a > 1 && c.layers[i].kind != "relu") {
      FuzzCase s = c;
      s.layers[i].a = c.layers[i].a / 2;
      steps.push_back(s);
    }
  return steps;
}

}  // namespace

FuzzCase shrink_fuzz_case(const FuzzCase& c, const std::function<bool(const FuzzCase&)>& still_fails, int max_tests) {
  FuzzCase best = c;
  int budget = max_tests;
  for (bool changed = true; changed && budget > 0;) {
    changed = shrink_list<FuzzLayer>(
        best.layers,
        [&](const std::vector<FuzzLayer>& layers) {
          FuzzCase s = best;
          s.layers = layers;
          return still_fails(s);
        },
        budget);
    for (const FuzzCase& s : case_steps(best)) {
      if (budget-- <= 0) break;
      if (still_fails(s)) {
        best = s;
        changed = true;
        break;  // the steps of the smaller case are computed afresh
      }
    }
  }
  return best;
}

}  // namespace dlsim
