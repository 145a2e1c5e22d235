#pragma once
// A concurrency policy assigns every op a stream, fixes the host's issue order and may pick a kernel variant
// per op (KernelCostModel::variants). Lowering (program/lower.h) turns the Schedule into a Program with an event on
// every cross-stream edge of Graph::dag() and rejects an order that breaks a dependence, naming the op.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "common/registry.h"
#include "hw/cost_model.h"
#include "workloads/graph.h"

namespace dlsim {

struct Schedule {
  std::vector<OpId> order;       // issue order: a topological order of the op DAG
  std::vector<int> stream_of;    // indexed by OpId; compute streams are 0 .. num_streams-1
  int num_streams = 1;
  // Indexed by OpId: the kernel variant each op runs (index into KernelCostModel::variants). Empty: all 0.
  std::vector<uint8_t> variant_of;
  // Indexed by OpId, beside variant_of: the workspace bytes of the chosen variant (KernelVariant::workspace_bytes),
  // which lowering gives the op's workspace tensor.
  std::vector<uint64_t> variant_workspace_bytes;
};

// What a policy may know beyond the graph and the kernel costs.
struct ScheduleContext {
  TimeNs launch_overhead_ns = 0;  // host time per launch (GpuSpec::launch_overhead_ns): issue is serial
  // The simulated steady iteration time of a whole schedule (the executor with the experiment's hardware and
  // pool), where the caller can provide it (the CLI does). Policies that choose between whole schedules use it
  // to keep a promise the estimate alone cannot (ios: never slower than serial); empty: they trust the estimate.
  std::function<TimeNs(const Schedule&)> simulate;
  // The simulated latency of one stage on an idle GPU: each group a chain of ops on its own stream, the host
  // issuing them round-robin across groups (sim/stage_simulation.h). Where the caller provides it (the CLI
  // does), ios prices its candidate stages with it; empty: with the estimate (schedule_estimate.h).
  std::function<TimeNs(const std::vector<std::vector<OpId>>&)> simulate_stage;
};

// A policy that would run past a bound on its own work (ios's dynamic program): the message names the parameter
// to change. run_experiment reports it as a ConfigError at the experiment's `concurrency` key.
struct ScheduleLimitError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class ConcurrencyPolicy {
 public:
  virtual ~ConcurrencyPolicy() = default;
  virtual Schedule schedule(const Graph& g, const KernelCostModel& cost, const ScheduleContext& ctx) = 0;
};

using ConcurrencyRegistry = Registry<ConcurrencyPolicy>;
const ConcurrencyRegistry& concurrency_registry();

// The most compute streams a policy may ask for (`max_streams`): the GPU's hardware work queues. CUDA maps
// streams onto CUDA_DEVICE_MAX_CONNECTIONS connections, at most 32 (Hyper-Q, every GPU since GK110); beyond
// that streams alias onto shared FIFO queues and stop being independent.
constexpr int kMaxHardwareStreams = 32;

// The serial schedule: graph order, one stream.
Schedule serial_schedule_of(const Graph& g);

// Renumbers streams by first use in the order and sets num_streams to the number used, so that a schedule that
// puts everything on one stream is exactly the serial one (no join events, no second stream).
void compact_streams(Schedule& s);

}  // namespace dlsim
