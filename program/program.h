#pragma once
// The Program: one training iteration as host-issued commands. Policies compile into it (program/lower.h);
// backends (the simulator in sim/, the real GPU in validate/) execute it. This is the contract between them.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/graph.h"

namespace dlsim {

enum class CmdKind : uint8_t {
  Launch,       // launch op `op` on `stream` (host pays the launch overhead)
  Alloc,        // allocate `tensor` through the pool, for use on `stream` (host call; may block)
  Free,         // free `tensor` through the pool (host call; stream-ordered reuse on the tensor's allocation stream,
                //   as PyTorch's allocator; after its RecordStream commands, see there)
  CopyOut,      // copy `tensor` device -> host on copy stream `stream`
  CopyIn,       // copy `tensor` host -> device on copy stream `stream`
  RecordEvent,  // record `event` on `stream`
  WaitEvent,    // make `stream` wait for `event` (does not block the host)
  SyncEvent,    // the host waits until `event` completes (cudaEventSynchronize)
  RecordStream, // `tensor` is also used on `stream` (PyTorch's Tensor.record_stream; host bookkeeping only): its
                //   next Free records an event on `stream` and returns the memory to the pool only once that event
                //   has completed, so that no later allocation reuses memory the stream may still touch
  HostCompute,  // run op `op` on the CPU, on host stream `stream` (a worker thread: it takes its commands in order
                //   and waits for events as a stream does; issuing costs the host nothing). Its tensors are in host
                //   memory: nothing on the device is touched (ZeRO-Offload's CPU optimizer step)
};
const char* to_string(CmdKind k);

struct Command {
  CmdKind kind = CmdKind::Launch;
  int16_t stream = 0;
  OpId op = -1;
  TensorId tensor = kNoTensor;
  int32_t event = -1;
  bool replay = false;  // Launch: a recomputation's replay, reading Graph::replay_inputs
};

struct Program {
  std::vector<Command> setup;      // once, before the first iteration: persistent tensors
  std::vector<Command> iteration;  // one iteration; run back to back `iterations` times
  // The first iteration where it differs from the others (program/first_iteration.h: what PyTorch allocates at
  // first use, such as torch.optim's state in the first optimizer step, then held): run in place of `iteration`
  // as iteration 0. Empty: every iteration runs `iteration`.
  std::vector<Command> first_iteration;
  std::vector<Command> teardown;   // after the last iteration: frees of persistent tensors
  int num_streams = 1;             // streams 0..num_streams-1 (compute streams first, then copy streams)
  int num_compute_streams = 1;
  int num_host_streams = 0;        // the last num_host_streams streams are CPU workers (HostCompute only)
  // The device may read a tensor a HostCompute writes one host step late (ZeRO-Offload's delayed parameter
  // update): what the Program declares, for independent checks (sim/check/swap_plan_checker.h).
  bool delayed_host_update = false;
  // The CPU's rate for HostCompute: GpuSpec::host_adam_bytes_per_s (DeepSpeedCPUAdam's) times this factor.
  double host_rate_scale = 1.0;
  bool host_stream(int s) const { return s >= num_streams - num_host_streams; }  // a CPU worker's
  int num_events = 0;              // events 0..num_events-1; re-recorded each iteration
  // Per stream, CUDA's stream priority: the block scheduler serves kernels of a lower number first
  // (sim/device_model.h). Empty: all streams equal; otherwise one entry per stream.
  std::vector<int> stream_priority;
  // Per OpId: which of KernelCostModel::variants each launch runs (a concurrency policy's choice). Empty: every
  // op runs variant 0, the model's cost().
  std::vector<uint8_t> kernel_variant;
  // Per TensorId: the bytes an Alloc of it takes, where a kernel variant changed an op's workspace. Empty: every
  // tensor's Tensor::bytes.
  std::vector<uint64_t> tensor_bytes;
};

// The bytes an Alloc of `t` takes in `p` (Program::tensor_bytes, else the graph's).
inline uint64_t alloc_bytes(const Program& p, const Graph& g, TensorId t) {
  return p.tensor_bytes.empty() ? g.tensor(t).bytes : p.tensor_bytes[static_cast<size_t>(t)];
}

}  // namespace dlsim
