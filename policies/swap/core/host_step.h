#pragma once
// What a HostStep (ZeRO-Offload, swap_policy.h) moves where: derived from the graph and the issue order alone,
// so that the lowering, the load figures, the policy and the reports agree on it.
#include <cstdint>
#include <vector>

#include "policies/swap/core/swap_policy.h"
#include "workloads/graph.h"

namespace dlsim {

struct HostStepTensors {
  std::vector<uint8_t> host_op;     // by OpId: runs on the CPU
  std::vector<uint8_t> host_only;   // by TensorId: persistent, used by host ops alone: never on the device
  std::vector<int> to_host_after;   // by TensorId: copied out after this position (its last use on the device); -1
  std::vector<uint8_t> from_host;   // by TensorId: written by a host op and used on the device: copied back in
  std::vector<TensorId> to_host, written_back;  // the same two sets, in TensorId order
  int64_t parameters = 0;  // elements of the tensors the host ops write back (the parameters they update)
  // Host memory the step keeps, bytes: an fp32 master copy of each parameter, fp32 optimizer state of the same
  // shape per host-only tensor (Adam's two moments), and an fp32 gradient buffer per parameter, as DeepSpeed's
  // CPU optimizer holds them whatever the device's precision.
  uint64_t host_state_bytes = 0;
  // fp32 state bytes the CPU Adam reads and writes per step: master + moments (12 per parameter for Adam).
  uint64_t host_update_bytes = 0;
};

// Throws std::invalid_argument naming the op or tensor when the step cannot run so: an op that is not an
// optimizer op (Phase::Optimizer), listed twice or not in the order; a host op whose output is not persistent
// (but for a scratch, TensorKind::Workspace, that only host ops touch: host memory, as the foreach Adam's
// temporaries are on the CPU); a tensor a host op reads that the device uses after that host op (the copy would
// be stale).
HostStepTensors host_step_tensors(const Graph& g, const std::vector<OpId>& order, const HostStep& step);

// With HostStep::fetch_parameters: one fetch of a parameter into device memory. It is allocated and copied in after
// position `issue_after` (-1: before the iteration's first op) and freed after position `last`; its uses in
// [first, last] are device ops, and recomputations re-running an op that reads it (at their `before`). Uses split
// where the phase changes (the forward uses, then the backward ones); two ranges closer than prefetch_ops + 1
// positions are one. Sorted by (issue_after, tensor).
struct ParameterFetch {
  TensorId tensor = kNoTensor;
  int issue_after = -1;
  int first = -1;
  int last = -1;
};
std::vector<ParameterFetch> parameter_fetches(const Graph& g, const std::vector<OpId>& order, const SwapPlan& plan,
                                              const HostStepTensors& h);

// The CPU time of host op `op` at `adam_bytes_per_s` (fp32 state bytes updated per second): its parameters'
// elements times 4 bytes times (1 + state tensors per parameter), over the rate.
TimeNs host_step_ns(const Graph& g, const Op& op, double adam_bytes_per_s);

}  // namespace dlsim
