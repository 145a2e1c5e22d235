#include "experiment/run_experiment.h"

#include "experiment/first_step.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>

#include "experiment/experiment_graph.h"
#include "experiment/first_step.h"
#include "experiment/memory_breakdown.h"
#include "experiment/parallel_precision.h"
#include "sim/check/swap_plan_checker.h"
#include "experiment/swap_planning.h"
#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/collective_op.h"
#include "hw/conv_scratch.h"
#include "hw/cublas_workspace.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "hw/math_path.h"
#include "hw/measured_workspace.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/concurrency/op_dag.h"
#include "policies/pool/pool_policy.h"
#include "policies/pool/virtual_device_memory.h"
#include "policies/swap/core/cbc_solver.h"
#include "sim/executor.h"
#include "program/lower.h"
#include "sim/check/memory_reuse_check.h"
#include "sim/stage_simulation.h"
#include "workloads/zoo.h"

namespace dlsim {

void check_max_streams(const Experiment& e) {
  if (!e.concurrency.params.has("max_streams")) return;
  const int64_t m = e.concurrency.params.get_int("max_streams");
  if (m > kMaxHardwareStreams)
    throw ConfigError(e.file, e.concurrency.line, "concurrency.max_streams",
                      "max_streams " + std::to_string(m) + " is above the hardware's limit of " +
                          std::to_string(kMaxHardwareStreams) +
                          " streams (CUDA_DEVICE_MAX_CONNECTIONS hardware work queues; more streams share queues)");
}

namespace {

// Under tensor parallelism the tp group fills a node first and the data-parallel group spans nodes (Megatron's
// and torchtitan's placement): max(1, gpus_per_node / tp) of its ranks share a node, at most all of them. Without
// a node: section, or without tp, the collectives' own default (as many as fit).
parallel::ParallelLayout with_dp_placement(parallel::ParallelLayout l, const GpuSpec& spec) {
  if (l.tp > 1 && spec.node)
    l.ranks_per_node = std::min<int64_t>(l.ranks, std::max<int64_t>(1, spec.node->gpus_per_node / l.tp));
  return l;
}

// `swap: zero-offload` on a data-parallel layout is ZeRO-Offload: it partitions the optimizer over the ranks, which
// is ZeRO-2's layout (zero_graph.cc). Plain DDP replicas each stepping their whole state on the host is not a
// configuration anyone runs; FSDP's shards already partition it.
parallel::ParallelLayout with_optimizer_offload(parallel::ParallelLayout l, const Experiment& e) {
  if (e.swap.name == "param-offload" && !l.data_parallel_single() && l.layout != parallel::Layout::Fsdp)
    throw ConfigError(e.file, e.swap.line, "swap",
                      "param-offload is FSDP's CPUOffload(offload_params=True): use it with parallel: {fsdp: N}, or "
                      "zero-offload with {zero: 2, dp: N}");
  if (e.swap.name != "zero-offload" || l.data_parallel_single()) return l;
  if (l.layout == parallel::Layout::Ddp)
    throw ConfigError(e.file, e.swap.line, "swap",
                      "zero-offload with parallel.dp: ZeRO-Offload partitions the optimizer state over the data-parallel "
                      "ranks; use parallel: {zero: 2, dp: N} (or fsdp)");
  if (l.layout == parallel::Layout::Zero) l.offload_optimizer = true;
  return l;
}

}  // namespace

PreparedExperiment prepare_experiment(const Experiment& e) { return prepare_experiment(e, build_experiment_graph(e)); }

PreparedExperiment prepare_experiment(const Experiment& e, Graph training_graph) {
  PreparedExperiment p;
  if (!e.parallel.is_single()) p.model_flops = model_flops(training_graph, e.parallel.tp);
  p.hw = load_hardware(e.hw, e.hw_override);
  try {  // one rank's graph under the experiment's data-parallel layout
    parallel::RankLocalGraph rank =
        parallel::rank_local_graph(std::move(training_graph),
                                   with_shard_dtype(with_optimizer_offload(with_dp_placement(e.parallel, p.hw.spec), e), e.precision));
    p.graph = std::move(rank.graph);
    p.categories = std::move(rank.categories);
    p.collectives = std::move(rank.collectives);
  } catch (const ConfigError& err) {
    if (!err.file().empty()) throw;
    throw ConfigError(e.file, e.parallel.line, err.key().empty() ? "parallel" : err.key(), err.message());
  }
  if (!e.kernel_model_overrides.empty()) {
    for (const auto& [k, v] : e.kernel_model_overrides) p.hw.spec.kernel_model_params.set(k, v);
    check_params(kernel_model_registry().get(p.hw.spec.kernel_model).params, p.hw.spec.kernel_model_params,
                 p.hw.spec.kernel_model);
    p.hw.kernels = make_cost_model(p.hw.spec);
  }
  apply_measured_workspaces(p.graph, p.hw.spec);  // a calibrated file's cuDNN workspaces replace the assumption
  apply_conv_scratch(p.graph, p.hw.spec);  // cuDNN's scratch measured through PyTorch's allocator, by geometry
  p.cublas = add_cublas_workspaces(p.graph, p.hw.spec);  // PyTorch's cuBLAS workspaces, one per host thread, held throughout
  check_max_streams(e);
  auto conc = concurrency_registry().create(e.concurrency.name, e.concurrency.params);
  ScheduleContext sc;
  sc.launch_overhead_ns = p.hw.spec.launch_overhead_ns;
  // Whole-schedule checks some policies make (ios against serial) run the simulator itself: two iterations,
  // no swaps (the schedule comes first), the experiment's pool on a fresh device.
  sc.simulate = [&e, &p](const Schedule& s) {
    const Program prog = lower(p.graph, s, SwapPlan{});
    VirtualDeviceMemory dev(p.hw.spec.memory_bytes, p.hw.spec.total_memory_bytes);
    auto pool = make_pool(e, dev);
    SimContext ctx{p.graph, p.hw.spec, *p.hw.kernels, *p.hw.link, *pool, dev};
    SimOptions opt;
    opt.iterations = 2;
    opt.record_trace = false;
    const RunResult r = simulate(prog, ctx, opt);
    return r.iterations_completed == 2 ? r.steady_iteration_ns : std::numeric_limits<TimeNs>::max();
  };
  // Candidate stages (ios) on the device model alone: no pool, no host beyond the launches.
  sc.simulate_stage = [&p](const std::vector<std::vector<OpId>>& groups) {
    return simulate_stage(p.graph, p.hw.spec, *p.hw.kernels, *p.hw.link, groups, p.hw.spec.launch_overhead_ns);
  };
  try {
    p.schedule = conc->schedule(p.graph, *p.hw.kernels, sc);
  } catch (const ScheduleLimitError& x) {
    throw ConfigError(e.file, e.concurrency.line, "concurrency", x.what());
  }
  p.ideal_ns = critical_path_ns(p.graph, op_dag(p.graph), fastest_durations(p.graph, *p.hw.kernels));
  if (e.swap.name == "none") {
    p.program = lower(p.graph, p.schedule, SwapPlan{});
    return p;
  }
  // On the schedule's streams, one or several (the lowering orders copies on all).
  try {  // a policy's parameter found wrong only now (checkmate's max_ops), or its solver missing
    p.swap = plan_swaps(e, p.graph, p.schedule, p.hw, p.program);
  } catch (const ConfigError& err) {
    if (!err.file().empty()) throw;
    throw ConfigError(e.file, e.swap.line, err.key().empty() ? "swap" : "swap." + err.key(), err.message());
  } catch (const SolverError& err) {
    throw ConfigError(e.file, e.swap.line, "swap", err.what());
  }
  return p;
}

namespace {

// A run-level error about a hardware value (a rate that makes a kernel too long to simulate) names the hardware
// file and the key; when the experiment's hw_override set that key, the override is what the user edits.
[[noreturn]] void rethrow_at_override(const Experiment& e, const ConfigError& err) {
  if (err.key().empty() || !e.hw_override.IsMap() || e.file.empty()) throw err;
  const YAML::Node set = yaml_find_path(e.hw_override, err.key());
  if (!set) {  // a key of the hardware file that the override made wrong: the override is what the user edits
    if (e.hw_override.size() == 0 || err.file() != resolve_hw_path(e.hw)) throw err;
    throw ConfigError(e.file, yaml_line(e.hw_override), "hw_override", hardware_error_under_override(err));
  }
  throw ConfigError(e.file, yaml_line(set), "hw_override." + err.key(), err.message());
}

ExperimentResult run_experiment_as_given(const Experiment& e, RunArtifacts* artifacts, GraphCache* graphs, bool breakdown);

}  // namespace

ExperimentResult run_experiment(const Experiment& e, RunArtifacts* artifacts, GraphCache* graphs, bool breakdown) {
  try {
    return run_experiment_as_given(e, artifacts, graphs, breakdown);
  } catch (const ConfigError& err) {
    rethrow_at_override(e, err);
  }
}

namespace {

ExperimentResult run_experiment_as_given(const Experiment& e, RunArtifacts* artifacts, GraphCache* graphs, bool breakdown) {
  const auto wall_start = std::chrono::steady_clock::now();
  ExperimentResult out;
  out.experiment = e;

  PreparedExperiment prep = graphs ? prepare_experiment(e, Graph(*graphs->get(e))) : prepare_experiment(e);
  Graph& g = prep.graph;
  std::optional<Hardware> run_hw;  // the plan made for prep.hw, run on another GPU's file
  if (!e.run_hw.empty()) run_hw = load_hardware(e.run_hw, e.hw_override);
  const Hardware& hw = run_hw ? *run_hw : prep.hw;
  // PyTorch's first step makes the optimizer's state and the cuBLAS workspaces where it first needs them; the
  // steady iterations after it are the prepared program's (the plan exported to the GPU harness stays that).
  const bool lazy = lazy_first_step(e, prep.swap ? &prep.swap->result.plan : nullptr);
  if (lazy) allocate_at_first_use(prep.program, g, pytorch_first_uses(g, prep.cublas));
  const Program& program = prep.program;
  if (e.first_step || lazy) out.first_step = to_string(lazy ? FirstStep::Lazy : FirstStep::Preallocated);
  out.ops = g.ops().size();
  out.tensors = g.tensors().size();

  VirtualDeviceMemory device(hw.spec.memory_bytes, hw.spec.total_memory_bytes);
  // With artifacts, the pool's calls and its cudaMallocs are logged too (for `dlsim run --memory-snapshot`);
  // the recorders pass every call through, so the run is the same.
  std::optional<LoggingDeviceMemory> logging_device;
  if (artifacts) logging_device.emplace(device, artifacts->allocations);
  DeviceMemory& dev = logging_device ? static_cast<DeviceMemory&>(*logging_device) : device;
  auto inner_pool = make_pool(e, dev);
  std::optional<LoggingPool> logging_pool;
  if (artifacts) logging_pool.emplace(*inner_pool, artifacts->allocations);
  PoolPolicy* pool = logging_pool ? static_cast<PoolPolicy*>(&*logging_pool) : inner_pool.get();
  SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, *pool, dev};
  SimOptions opt;
  // A lazy first step runs before the experiment's iterations, as one more: the last one, whose times are
  // reported, is as far from the start as without it (the segments it leaves may still make the next one open a
  // few, and the host's lead over the device settles an iteration later).
  opt.iterations = e.iterations + (lazy ? 1 : 0);
  if (artifacts) artifacts->iterations = opt.iterations;
  opt.launch = e.launch;
  opt.sync_every_iteration = e.sync_every_step;
  // A swap run reads its copies off the trace; a run on several streams is checked for memory reuse on it; the
  // memory breakdown reads the allocation records off it.
  const bool streams = program.num_compute_streams > 1;
  // A data-parallel run's exposed communication is read off it too.
  const bool parallel = !e.parallel.is_single();
  opt.record_trace = breakdown || artifacts != nullptr || prep.swap.has_value() || streams || parallel;
  RunResult r = simulate(program, ctx, opt);

  out.oom = r.trace.oom;
  out.oom_where = r.trace.oom_where;
  out.iterations_run = lazy ? std::max(0, r.iterations_completed - 1) : r.iterations_completed;
  if (lazy && r.iterations_completed > 0) {
    out.first_step_peak_live_bytes = r.first_iteration_peak_live_bytes;
    out.first_step_peak_reserved_bytes = r.first_iteration_peak_reserved_bytes;
  }
  out.iteration_time_us = static_cast<double>(r.steady_iteration_ns) / 1000.0;
  out.first_iteration_time_us = r.iteration_ns.empty() ? 0.0 : static_cast<double>(r.iteration_ns.front()) / 1000.0;
  out.peak_live_bytes = r.peak_live_bytes;
  out.ideal_iteration_us = static_cast<double>(prep.ideal_ns) / 1000.0;
  out.peak_reserved_bytes = r.peak_reserved_bytes;
  // From the device's own counters: a pool's constructor may reserve before the run starts (cnmem does).
  out.device_mallocs = dev.malloc_calls();
  out.device_frees = dev.free_calls();
  out.alloc_time_us = r.allocator_ns.empty() ? 0.0 : static_cast<double>(r.allocator_ns.back()) / 1000.0;
  out.events = r.events_processed;
  out.sm_occupancy = r.steady_sm_occupancy;
  out.host_time_us = static_cast<double>(r.steady_host_busy_ns) / 1000.0;
  out.device_time_us = static_cast<double>(r.steady_device_busy_ns) / 1000.0;
  out.host_worker_time_us = static_cast<double>(r.steady_host_worker_busy_ns) / 1000.0;
  out.streams = program.num_streams;
  out.pool_report = pool->report();
  out.up_front_reserved_bytes = pool->up_front_bytes();
  out.kernel_model = hw.spec.kernel_model;
  out.kernel_report = hw.kernels->report(g);
  out.warnings = precision_warnings(hw.spec, g);
  if (prep.swap) {
    out.swap = swap_figures(*prep.swap, g, program, r.trace, out.iteration_time_us, out.peak_live_bytes);
    // These compare with the no-swap run and the bound the planner simulated on `hw`; run on another file they
    // would mix two GPUs, so they are left out (compare with a no-swap run that has the same run_hw).
    if (run_hw)
      for (const char* key : {"no_swap_iteration_time_us", "stall_us", "overhead", "swap_lower_bound_us",
                              "swap_gap_to_bound"})
        out.swap.erase(key);
    // Every swapped run is checked independently of its policy; a violation is a bug, not a result.
    const SwapCheck check = check_swapped_run(g, program, r.trace, out.swap["pinned_host_bytes"].get<uint64_t>());
    if (!check.ok())
      throw std::logic_error("swap plan of '" + e.swap.label() + "' failed the independent check: " + check.problems.front() +
                             (check.problems.size() > 1 ? " (and " + std::to_string(check.problems.size() - 1) + " more)" : ""));
  }
  if (streams) {  // memory moved between streams only after the events that order it; a violation is a bug
    const std::vector<std::string> races = check_memory_reuse(g, program, r.trace);
    if (!races.empty())
      throw std::logic_error("the run on " + std::to_string(program.num_compute_streams) + " streams failed the memory " +
                             "reuse check: " + races.front() +
                             (races.size() > 1 ? " (and " + std::to_string(races.size() - 1) + " more)" : ""));
  }
  if (breakdown) out.memory_breakdown = to_json(memory_breakdown(r.trace, g, prep.categories));
  if (parallel && r.iterations_completed > 0) {
    const int steady = r.iterations_completed - 1;
    // Every collective op of the rank's graph: the layout's (prep.collectives) and the tensor-parallel ones the
    // builder put in the graph.
    for (const Op& op : g.ops()) {
      if (!is_collective(op.kind)) continue;
      nlohmann::json& k = out.collectives[to_string(collective_kind(op.kind))];
      if (k.is_null()) k = {{"count", 0}, {"bytes", uint64_t{0}}, {"time_us", 0.0}};
      k["count"] = k["count"].get<int>() + 1;
      k["bytes"] = k["bytes"].get<uint64_t>() + static_cast<uint64_t>(op.attr(Attr::message_bytes));
    }
    for (const OpRecord& o : r.trace.ops)
      if (o.iteration == steady && is_collective(g.op(o.op).kind)) {
        nlohmann::json& k = out.collectives[to_string(collective_kind(g.op(o.op).kind))];
        k["time_us"] = k["time_us"].get<double>() + static_cast<double>(o.end - o.start) / 1000.0;
      }
    const double peak = dense_peak_flops(hw.spec, compute_precision(e.precision, e.parallel), e.tf32);
    out.parallel_metrics = parallel_metrics_json(prep.model_flops, communication_time(g, r.trace, steady), peak,
                                                 e.batch, r.steady_iteration_ns);
  }
  if (artifacts) {
    artifacts->trace = std::move(r.trace);
    artifacts->graph = std::move(g);
  }
  out.sim_wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - wall_start).count();
  return out;
}

}  // namespace

nlohmann::json to_json(const ExperimentResult& r, bool with_wall_time) {
  const Experiment& e = r.experiment;
  nlohmann::json j;
  j["model"] = e.model;
  j["batch"] = e.batch;
  j["hw"] = e.hw_label();
  if (!e.run_hw.empty()) j["run_hw"] = e.run_hw;  // only when set: runs without it print as before
  j["pool"] = e.pool.label();
  j["swap"] = e.swap.label();
  j["concurrency"] = e.concurrency.label();
  if (!e.parallel.is_single()) {  // only when set: the outputs of one-GPU runs keep their keys
    j["parallel"] = e.parallel.label();
    j["collectives"] = r.collectives;
    for (const auto& [k, v] : r.parallel_metrics.items()) j[k] = v;
  }
  j["iterations"] = e.iterations;
  j["iterations_completed"] = r.iterations_run;
  j["iteration_time_us"] = r.iteration_time_us;
  j["launch"] = to_string(e.launch);
  if (e.sync_every_step) j["sync_every_step"] = true;  // only when set: the outputs of runs without it stay as they were
  // Where it is lazy (by default on pytorch-caching) or chosen: other runs' outputs keep their keys.
  if (r.first_step) j["first_step"] = *r.first_step;
  j["streams"] = r.streams;
  j["sm_occupancy"] = r.sm_occupancy;
  j["host_time_us"] = r.host_time_us;
  j["device_time_us"] = r.device_time_us;
  j["bound"] = r.host_bound() ? "host" : "device";
  j["first_iteration_time_us"] = r.first_iteration_time_us;
  j["ideal_iteration_us"] = r.ideal_iteration_us;
  j["peak_live_bytes"] = r.peak_live_bytes;
  j["peak_reserved_bytes"] = r.peak_reserved_bytes;
  if (r.first_step_peak_live_bytes) j["first_step_peak_live_bytes"] = *r.first_step_peak_live_bytes;
  if (r.first_step_peak_reserved_bytes) j["first_step_peak_reserved_bytes"] = *r.first_step_peak_reserved_bytes;
  j["fragmentation"] = r.fragmentation();
  if (!r.memory_breakdown.empty()) j["memory_breakdown"] = r.memory_breakdown;
  j["up_front_reserved_bytes"] = r.up_front_reserved_bytes;
  // What the excess of peak reserved over peak live is: the pool's own reservation, or fragmentation.
  j["reserved_excess"] = r.reserved_up_front() ? "reserved up front" : "fragmentation";
  j["device_mallocs"] = r.device_mallocs;
  j["device_frees"] = r.device_frees;
  j["alloc_time_us"] = r.alloc_time_us;
  j["oom"] = r.oom;
  if (r.oom) j["oom_where"] = r.oom_where;
  j["ops"] = r.ops;
  j["tensors"] = r.tensors;
  j["events"] = r.events;
  j["pool_report"] = r.pool_report;
  j["kernel_model"] = r.kernel_model;
  j["kernel_report"] = r.kernel_report;
  j["precision"] = to_string(e.precision);
  j["tf32"] = to_string(e.tf32);
  j["memory_format"] = to_string(e.memory_format);
  j["kernels"] = to_string(e.kernels);
  j["warnings"] = r.warnings;
  for (const auto& [k, v] : r.swap.items()) j[k] = v;
  if (with_wall_time) j["sim_wall_ms"] = r.sim_wall_ms;
  return j;
}

}  // namespace dlsim
