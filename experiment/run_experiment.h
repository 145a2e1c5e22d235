#pragma once
// Runs one experiment on the simulator: builds the training graph, schedules it, lowers it to a Program and
// executes it through the chosen pool on the modelled GPU.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "experiment/snapshot/allocation_recorder.h"
#include "experiment/experiment.h"
#include "experiment/experiment_pool.h"
#include "experiment/swap_planning.h"
#include "hw/cublas_workspace.h"
#include "hw/hardware.h"
#include "experiment/parallel_metrics.h"
#include "parallel/rank_local_graph.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pool_policy.h"
#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct ExperimentResult {
  Experiment experiment;
  // "lazy" or "preallocated" where the run chose (first_step) or defaulted to the lazy first step; else absent
  std::optional<std::string> first_step;
  bool oom = false;
  std::string oom_where;
  int iterations_run = 0;
  double iteration_time_us = 0;     // steady state: the last complete iteration
  double first_iteration_time_us = 0;
  // The bound no schedule beats: the critical path of the training DAG with each kernel at its fastest
  // standalone time, infinite SMs, no launch or allocation cost (policies/concurrency/op_dag.h).
  double ideal_iteration_us = 0;
  uint64_t peak_live_bytes = 0;     // lower bound for any pool
  uint64_t peak_reserved_bytes = 0; // the most the pool held from the device
  // A lazy first step (experiment/first_step.h): both peaks when the host had issued it, setup included.
  std::optional<uint64_t> first_step_peak_live_bytes, first_step_peak_reserved_bytes;
  uint64_t device_mallocs = 0;      // cudaMalloc calls over the run
  uint64_t device_frees = 0;
  double alloc_time_us = 0;         // host time in allocator calls in the steady-state iteration
  uint64_t events = 0;              // discrete events processed
  double sm_occupancy = 0;          // steady state: mean share of the GPU's thread-block slots kernels held
  // Steady state: the host's busy time (issuing ops: the launch costs or PyTorch's eager host model, graph
  // launches, allocator calls), the device's (while any of the iteration's kernels or copies runs) and the CPU
  // workers' (a HostCompute optimizer step, ZeRO-Offload's) in the iteration. The step is bound by the host when
  // the host's or a CPU worker's is at least the device's: the GPU waits for work (sim/sim_run.h).
  double host_time_us = 0;
  double device_time_us = 0;
  double host_worker_time_us = 0;
  bool host_bound() const {
    const double host = std::max(host_time_us, host_worker_time_us);
    return host >= device_time_us && host > 0;
  }
  int streams = 1;                  // the program's streams (compute and copy)
  double sim_wall_ms = 0;           // wall time of the simulation (the one non-deterministic figure)
  size_t ops = 0;
  size_t tensors = 0;
  nlohmann::json pool_report;       // pool-specific figures
  std::string kernel_model;         // the hardware file's kernel cost model (roofline, table)
  nlohmann::json kernel_report;     // its figures about the graph (the table: how many ops it has measured)
  // Precision choices the GPU cannot honour and what runs instead (hw/math_path.h's precision_warnings).
  std::vector<std::string> warnings;
  // At the peaks of live and of reserved bytes, what they hold by category (experiment/memory_breakdown.h); empty
  // when the run was asked not to record it.
  nlohmann::json memory_breakdown = nlohmann::json::object();
  // A data-parallel run's collectives (parallel/collective_site.h): how many of each kind, their bytes (S) and
  // their kernels' time in the steady iteration; empty for one GPU.
  nlohmann::json collectives = nlohmann::json::object();
  // A data-parallel run's communication and throughput figures (experiment/parallel_metrics.h, docs/multi-gpu.md):
  // communication_time_us, exposed_communication_time_us, tokens_per_s_per_gpu (or images_per_s_per_gpu),
  // model_flops_per_iteration, mfu_flop_count, mfu; empty for one GPU, whose output keeps its keys.
  nlohmann::json parallel_metrics = nlohmann::json::object();
  nlohmann::json swap = nlohmann::json::object();  // a swap run's figures (experiment/swap_planning.h); empty without
  // What the pool took by its configuration, not by demand (PoolPolicy::up_front_bytes): cnmem's first region,
  // tf-bfc's whole memory limit without allow_growth; 0 for pools that grow on demand.
  uint64_t up_front_reserved_bytes = 0;
  double fragmentation() const {    // reserved / live - 1
    return peak_live_bytes ? static_cast<double>(peak_reserved_bytes) / static_cast<double>(peak_live_bytes) - 1.0 : 0.0;
  }
  // The pool never held more than it reserved up front: its excess over the live peak is that reservation, not
  // fragmentation (a pool that grows on demand), and reports label it so.
  bool reserved_up_front() const { return up_front_reserved_bytes > 0 && peak_reserved_bytes <= up_front_reserved_bytes; }
};

// What a caller may keep besides the figures: the training graph and the full trace (for timelines).
struct RunArtifacts {
  Graph graph;
  Trace trace;
  AllocationLog allocations;  // the pool's calls and the device calls beneath them (experiment/snapshot/allocation_recorder.h)
  int iterations = 0;         // simulated: the experiment's, and a lazy first step before them
};

// The compiled experiment: what both backends execute.
struct PreparedExperiment {
  Graph graph;  // one rank's (parallel/rank_local_graph.h): the training graph itself on one GPU
  std::vector<parallel::MemoryCategory> categories;    // per tensor of graph, for the memory breakdown
  std::vector<parallel::CollectiveSite> collectives;  // the layout's collective ops (in graph); none on one GPU
  ModelFlops model_flops;  // of the training graph, before the layout: one rank's work per iteration
  Hardware hw;
  Schedule schedule;
  Program program;
  std::optional<SwapPlanning> swap;  // how the swap plan was made (absent for `swap: none`)
  TimeNs ideal_ns = 0;               // ExperimentResult::ideal_iteration_us, in ns
  CublasWorkspaces cublas;           // the workspace tensors added to graph, per host thread
};
// A concurrency policy's max_streams above kMaxHardwareStreams: a ConfigError naming the limit.
void check_max_streams(const Experiment& e);
PreparedExperiment prepare_experiment(const Experiment& e);
// The same for a training graph built elsewhere (dlsim simfuzz's random models); e.model is not read.
PreparedExperiment prepare_experiment(const Experiment& e, Graph training_graph);

class GraphCache;
// artifacts != nullptr: record the full trace (slower) and hand it over with the graph. graphs != nullptr: the
// training graph comes from (and is built once into) that cache (experiment/experiment_graph.h; `dlsim sweep`), a copy per
// run since hardware-specific steps (measured workspaces) modify it. Safe to call from several threads at once.
// memory_breakdown=false leaves ExperimentResult::memory_breakdown empty and records no trace for it: a sweep or a
// batch search (dlsim fit) reports none, and its many runs need not hold a trace each. (What recording costs was
// within the noise of a shared machine: medians of 7 interleaved runs 169 against 142 ms for resnet50 at batch 64,
// 181 against 210 ms for llama3.2-1b.)
ExperimentResult run_experiment(const Experiment& e, RunArtifacts* artifacts = nullptr, GraphCache* graphs = nullptr,
                                bool memory_breakdown = true);
// Everything `dlsim run --json` prints. with_wall_time=false drops sim_wall_ms (for byte-identical outputs).
nlohmann::json to_json(const ExperimentResult& r, bool with_wall_time = true);

}  // namespace dlsim
