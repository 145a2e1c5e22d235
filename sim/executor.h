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
//     only then is out of memory. Under launch: cuda-graph an iteration is issued as it is captured: a hold made
//     then lasts until the host has issued the whole iteration, whatever the device has done, and an allocation
//     refused meanwhile cannot wait for it (PyTorch defers a captured free's events until the capture ends;
//     dlsim-cuda, validate/gpu/held_frees.h, does the same). Pools that follow a placement made in advance
//     (planned, smartpool: PoolPolicy::holds_frees_for_other_streams) get the memory back at once instead, and
//     the next owner's stream waits for those streams (below), as MXNet's engine orders a planned block's reuse
//     after its readers;
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
#include "program/program.h"
#include "sim/sim_run.h"

namespace dlsim {

// Runs setup, `iterations` copies of the iteration back to back (the first one Program::first_iteration where
// that is not empty), then teardown. Throws std::invalid_argument
// when the Program is malformed (a stream, event, op or tensor out of range; an Alloc of a live tensor, a
// Free of a dead one, a Launch or copy of a tensor that is not allocated), naming the section and index.
RunResult simulate(const Program& program, const SimContext& ctx, const SimOptions& options);

}  // namespace dlsim
