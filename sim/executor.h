#pragma once
// The simulator backend: executes a Program on a modelled GPU with a discrete-event engine and reports what
// happened (RunResult, with the Trace). The host side is sim/internal/engine.h, the device side (streams,
// kernels, copies) sim/device_model.h; docs/ARCHITECTURE.md draws the seam. What is modelled, and why:
// - The host issues commands in program order, through one launch path for all streams. Eagerly, a kernel
//   launch or an async copy costs the host launch_overhead_ns, after which the command joins its stream; with
//   launch: cuda-graph each iteration costs one graph launch and each command a small per-node cost (LaunchMode).
//   Streams reach the GPU through max_connections hardware queues, FIFO each (sim/device_model.h).
// - Kernels are grids of thread blocks dispatched to the SMs in waves, oldest and highest-priority grid first
//   (Program::stream_priority), so kernels that fill the GPU overlap only in their tails while small ones run
//   side by side; kernels resident together share the HBM bandwidth (sim/device_model.h). Rates are solved
//   again only when a wave starts or ends; completions are re-keyed with a generation counter.
// - Copies take TransferModel::latency, then move their bytes through the link of their direction; copies
//   in flight in one direction share its bandwidth equally. With copy_engines >= 2 the directions are
//   independent; with one engine copies are served one at a time in the order they reached it.
//   Host buffers are pinned.
// - Alloc/Free call the pool at host time. The pool's cudaMalloc/cudaFree calls are read from the
//   DeviceMemory counters: cudaMalloc blocks the host for malloc_base_ns + malloc_ns_per_gib * GiB per call;
//   cudaFree first waits until every stream is idle (it synchronizes the device), then costs free_base_ns +
//   free_ns_per_gib * GiB. A pool hit costs the host nothing. Frees are stream-ordered (PyTorch): the
//   memory is reusable by later work on the tensor's allocation stream at once. With several streams:
//   - a tensor that RecordStream named other streams for is held at its Free: the executor records an event on
//     each of those streams, and the memory returns to the pool at the first Alloc after all have completed
//     (PyTorch's insert_events/process_events). An Alloc the pool refuses while memory is held makes the host
//     wait for every held free's events, return them, and try once more (synchronize_and_free_events), and
//     only then is out of memory. Pools that follow a placement made in advance (planned, smartpool:
//     PoolPolicy::holds_frees_for_other_streams) get the memory back at once instead, and the next owner's
//     stream waits for those streams (below), as MXNet's engine orders a planned block's reuse after its readers;
//   - memory reused on another stream than its last owner's streams (a pool not kept per stream, as cnmem's
//     root, or a planned slot) gets the event a framework would insert: the new owner's stream waits until each
//     of those streams has passed the old owner's Free. PyTorch's per-stream pools never need it.
//   These events are the executor's own (one per stream, beyond the Program's) and cost the host nothing.
// - RecordEvent/WaitEvent follow CUDA: a wait waits for the most recent record issued before it (no record:
//   no wait). SyncEvent blocks the host until that record completes. Event calls cost the host nothing.
// - The host runs ahead of the device until a stream's launch queue is full (concurrency.launch_queue_depth
//   commands queued and not done, about a thousand): an eager launch into it then blocks the host until the
//   stream's oldest command is done. Under launch: cuda-graph the host is not bounded (a replay issues nothing).
// - An allocation the pool cannot satisfy stops the host (Trace::oom and oom_where say where); the work
//   already queued on the device still completes, so iterations finished before the failure are reported.
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
// GpuSpec::launch_overhead_ns), or the whole iteration captured as a CUDA Graph (cuda-graph: one
// cudaGraphLaunch per iteration, concurrency.graph_launch_ns, then concurrency.graph_node_ns per kernel or copy as
// the graph's work reaches the GPU), as torch.compile's reduce-overhead mode and IOS-style runtimes do.
enum class LaunchMode : uint8_t { Eager, CudaGraph };
const char* to_string(LaunchMode m);  // "eager", "cuda-graph"
inline constexpr std::array<LaunchMode, 2> kLaunchModes = {LaunchMode::Eager, LaunchMode::CudaGraph};

struct SimOptions {
  int iterations = 1;
  LaunchMode launch = LaunchMode::Eager;
  bool record_trace = true;  // false: RunResult::trace keeps only iterations and the OOM fields (benchmarks)
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

  Trace trace;
};

// Runs setup, `iterations` copies of the iteration back to back, then teardown. Throws std::invalid_argument
// when the Program is malformed (a stream, event, op or tensor out of range; an Alloc of a live tensor, a
// Free of a dead one, a Launch or copy of a tensor that is not allocated), naming the section and index.
RunResult simulate(const Program& program, const SimContext& ctx, const SimOptions& options);

}  // namespace dlsim
