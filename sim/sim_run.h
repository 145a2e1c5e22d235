#pragma once
// What a simulation runs on and what it reports (sim/executor.h runs it): the context (graph, GPU, kernel and
// link models, pool and device memory), the options (iterations, launch mode) and the RunResult. Apart from the
// executor's API so that the host engine (sim/internal/engine.h) and the executor both stand on it.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/cost_model.h"
#include "hw/gpu_spec.h"
#include "policies/pool/pool_policy.h"
#include "program/program.h"
#include "program/trace.h"
#include "workloads/graph.h"

namespace dlsim {

struct SimContext {
  const Graph& graph;
  const GpuSpec& gpu;
  const KernelCostModel& kernels;
  const TransferModel& link;
  PoolPolicy& pool;
  DeviceMemory& device;  // the memory under `pool`: its counters give the cudaMalloc/cudaFree calls
};

// How the host issues kernels (experiment key `launch`): one call per kernel and copy (eager, each costing
// GpuSpec::launch_overhead_ns, or with the hardware file's host_cpu.pytorch_eager each op PyTorch's host cost,
// hw/eager_host_model.h), or the whole iteration captured as a CUDA Graph (cuda-graph: one
// cudaGraphLaunch per iteration, concurrency.graph_launch_ns, then concurrency.graph_node_ns per kernel or copy as
// the graph's work reaches the GPU), as torch.compile's reduce-overhead mode and IOS-style runtimes do.
enum class LaunchMode : uint8_t { Eager, CudaGraph };
const char* to_string(LaunchMode m);  // "eager", "cuda-graph"
inline constexpr std::array<LaunchMode, 2> kLaunchModes = {LaunchMode::Eager, LaunchMode::CudaGraph};

struct SimOptions {
  int iterations = 1;
  LaunchMode launch = LaunchMode::Eager;
  bool record_trace = true;  // false: RunResult::trace keeps only iterations and the OOM fields (benchmarks)
  // The host waits for the device at the end of every iteration before issuing the next (a training loop that
  // calls loss.item() or torch.cuda.synchronize() each step, as PyTorch's measured steps were timed): no iteration
  // overlaps the next. False: iterations run back to back, the host issuing the next while the GPU finishes.
  bool sync_every_iteration = false;
};

struct RunResult {
  int iterations_completed = 0;
  // Per completed iteration: end of iteration i minus end of iteration i-1 (the first: minus the time the
  // host began issuing it). Iterations overlap at their edges, so this is the time between completions.
  std::vector<TimeNs> iteration_ns;
  TimeNs steady_iteration_ns = 0;  // the last completed iteration's entry of iteration_ns; 0 if none
  TimeNs total_ns = 0;             // simulated time when the run ended

  uint64_t peak_live_bytes = 0;      // largest sum of Tensor::bytes of allocated tensors: a floor for any pool
  uint64_t peak_reserved_bytes = 0;  // DeviceMemory::peak_reserved() at the end
  // Both peaks as they stood when the host had issued iteration 0 (Alloc and Free are host calls): the first
  // iteration's own, setup's included (Program::first_iteration: a first training step's).
  uint64_t first_iteration_peak_live_bytes = 0;
  uint64_t first_iteration_peak_reserved_bytes = 0;
  uint64_t device_malloc_calls = 0;  // cudaMalloc calls during this run (setup and teardown included)
  uint64_t device_free_calls = 0;
  // Host time spent inside Alloc/Free commands (cudaMalloc/cudaFree costs and cudaFree's device
  // synchronisation), per iteration; setup and teardown apart.
  std::vector<TimeNs> allocator_ns;
  TimeNs setup_allocator_ns = 0;
  TimeNs teardown_allocator_ns = 0;
  uint64_t events_processed = 0;  // events popped from the queue (stale, cancelled ones included)
  // Per completed iteration, over the same interval as iteration_ns: the mean share of the GPU's thread-block
  // slots that resident kernels held (sim/device_model.h); the steady state's is the last.
  std::vector<double> sm_occupancy;
  double steady_sm_occupancy = 0;
  // Per completed iteration, each charged its own work: the issuing host's busy time (launch costs or the eager
  // host model's per-op costs, graph launches, allocator calls; not the time it waits), the device's (while any of
  // its kernels or copies runs: PyTorch's profiler's "GPU busy") and the CPU workers' (its HostCompute steps,
  // ZeRO-Offload's optimizer). The steady state's are the last. The largest is the step's bound.
  std::vector<TimeNs> host_busy_ns;
  std::vector<TimeNs> device_busy_ns;
  std::vector<TimeNs> host_worker_busy_ns;
  TimeNs steady_host_busy_ns = 0;
  TimeNs steady_device_busy_ns = 0;
  TimeNs steady_host_worker_busy_ns = 0;

  Trace trace;
};

}  // namespace dlsim
