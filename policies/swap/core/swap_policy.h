#pragma once
// A swap policy decides which tensors leave device memory between uses, and when they go and come back (copied to
// host memory and back, or dropped and recomputed). It
// plans from a profile of one iteration run without swapping (the simulator's own run, as SINGA profiles its
// first iterations) and writes a SwapPlan, which program/lower.h turns into CopyOut/CopyIn commands; the same
// Program runs on the simulator and on the real GPU (validate/).
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/registry.h"
#include "hw/cost_model.h"
#include "policies/concurrency/concurrency_policy.h"
#include "workloads/graph.h"

namespace dlsim {

// A profile of one steady-state iteration run with every tensor on the device: what a policy learns from
// running it once. Times are relative to the iteration's start.
struct IterationProfile {
  std::vector<OpId> order;          // ops in issue order
  std::vector<TimeNs> op_start;     // indexed by position in `order`
  std::vector<TimeNs> op_end;
  TimeNs iteration_ns = 0;          // the iteration's length
  uint64_t peak_live_bytes = 0;     // the largest total of live tensor bytes (the no-swap load peak)
};

// One tensor's trip to host memory and back. Positions index the issue order.
// - Copy-out issued after position `out_after` (it starts once the tensor's last writer is done); with
//   copy_out = false nothing is copied: the host copy made earlier (an earlier action's copy-out, or a
//   to-host ExtraCopy) is still valid, and the device copy is simply dropped.
// - The device memory is freed after position `free_after`, once the copy-out is complete (the allocation
//   stream waits for it there: a stall when it is not done). -1: after the next op on the allocation stream
//   (vDNN's layer-boundary synchronisation), or at `in_issue_after` when there is none.
// - After position `in_issue_after` fresh memory is allocated and the copy-in issued; the op at
//   `in_needed_by` waits for it. The tensor is off the device during positions free_after+1 .. in_issue_after.
struct SwapAction {
  TensorId tensor = kNoTensor;
  int out_after = -1;
  int in_issue_after = -1;
  int in_needed_by = -1;
  int free_after = -1;
  bool copy_out = true;
};

// A copy that changes no residency: PyTorch's save_on_cpu packs a tensor once per op that saves it, and
// unpacks it once per backward node. to_host: after position `pos`; to the device: before position `pos`
// (into the tensor's live device memory).
struct ExtraCopy {
  TensorId tensor = kNoTensor;
  int pos = -1;
  bool to_host = true;
};

// A recomputation (activation checkpointing, DTR, Capuchin, Checkmate): tensors leave device memory with no copy
// and come back by re-running the ops that produce them.
// - Each dropped tensor is freed after position `free_after` (on its allocation stream, as a last use frees it;
//   -1: after its last use before `before`) and is not used in free_after+1 .. before-1. It must not be
//   persistent, and an op of `ops` must write it. Gaps of one tensor do not overlap, nor overlap its swap actions.
// - Right before the op at position `before`, on that op's stream and after its waits, the ops of `ops` are
//   launched again in this order (each with its workspace). Each ran earlier in the order (before `before`);
//   it may write a non-persistent tensor it reads (in place, as torchvision's ReLU(inplace=True)) only when an
//   earlier op of the same replay wrote that tensor (persistent state it updates in place, batch norm's running
//   statistics, is updated again, as under torch.utils.checkpoint); every input it reads is on the
//   device then or an output of an earlier replayed op of the same recomputation. Before each launch,
//   each of its outputs not on the device is allocated; dropped tensors stay (their memory again, until their
//   last use or next drop), the other outputs allocated for the replay are freed after the last replayed op
//   that reads them. An output still on the device is simply written again (the values are the same: a
//   recomputation reproduces its random state, as torch.utils.checkpoint restores the RNG).
// - Each tensor of `held` stays allocated until the replay, as a use at `before` (or longer, by its own uses):
//   selective checkpointing's cache, which keeps the outputs its policy saves from the forward pass until the
//   recomputation takes them back instead of re-running their ops (policies/swap/checkpoint/selective_checkpoint.h).
//   A held tensor is not persistent and is made before `before`.
// Positions index the issue order, as for swap actions.
struct Recomputation {
  struct Drop {
    TensorId tensor = kNoTensor;
    int free_after = -1;
  };
  std::vector<Drop> drops;
  std::vector<OpId> ops;
  int before = -1;
  std::vector<TensorId> held;
};

// ZeRO-Offload (Ren et al., ATC'21): the optimizer step runs on the CPU. The ops of `ops` (optimizer ops) run on a
// CPU worker thread instead of the GPU (CmdKind::HostCompute, timed by GpuSpec::host_adam_bytes_per_s), and:
// - the persistent tensors only they use (Adam's moments) live in host memory alone, never on the device;
// - every other tensor they read that is not persistent (a gradient) is copied to the host after its last use on
//   the device and freed there once the copy is done: streamed out during the backward pass;
// - every tensor they write that the device uses (a weight) is copied back into its device memory after the step;
//   the host keeps it in fp32 (the master copy: policies/swap/core/host_step.h counts the host bytes).
// With delayed_update (DPU) the step of iteration i runs beside iteration i+1 on the GPU, whose forward and
// backward use the weights of step i-1: they are copied in at the end of iteration i+1, after its backward.
// With fetch_parameters (FSDP's CPUOffload(offload_params=True)) the tensors the step writes (the parameters) live
// in host memory between their uses too: each is copied in (into fresh memory, `prefetch_ops` ops ahead of its first
// use) for its forward uses and again for its backward uses (a recomputation's reads count there), and freed after
// the last use of each; nothing is copied back after the step. cpu_rate_scale multiplies the CPU's Adam rate
// (GpuSpec::host_adam_bytes_per_s, DeepSpeedCPUAdam's): PyTorch's own CPU optimizer is slower.
struct HostStep {
  std::vector<OpId> ops;
  bool delayed_update = false;
  bool fetch_parameters = false;
  int prefetch_ops = 0;
  double cpu_rate_scale = 1.0;
  bool empty() const { return ops.empty(); }
};

// Where the copies run. Dedicated: one D2H and one H2D copy stream beside the compute streams (SINGA, vDNN,
// SwapAdvisor). Compute: on the compute stream of the op they serve, in line with the kernels (PyTorch's
// save_on_cpu uses the current stream).
enum class CopyStreams : uint8_t { Dedicated, Compute };

struct SwapPlan {
  std::vector<SwapAction> actions;
  std::vector<ExtraCopy> copies;
  std::vector<Recomputation> recomputations;
  HostStep host_step;
  CopyStreams streams = CopyStreams::Dedicated;
  bool host_waits_for_copy_out = false;  // each to-host copy blocks the host until done (a blocking copy_)
  bool empty() const { return actions.empty() && copies.empty() && recomputations.empty() && host_step.empty(); }
  bool copies_data() const { return !actions.empty() || !copies.empty() || !host_step.empty(); }  // needs copy streams
};

// What a policy hands back: the plan, the issue order it is written for (a policy may reorder the ops, as
// SwapAdvisor searches the schedule; empty = the schedule's order), the load peak it aimed at and what it
// found on the way (for `run --json`).
struct SwapResult {
  SwapPlan plan;
  std::vector<OpId> order;
  uint64_t target_bytes = 0;  // the peak of live bytes the plan aims at; 0: the policy aims at none
  nlohmann::json report = nlohmann::json::object();
};

// The simulator in the loop: lowers a plan written for `order` and simulates it (the experiment's pool, no
// memory limit), giving the steady-state iteration time and the peak of live bytes. Implemented in cli/, as
// policies/ cannot see the simulator.
struct PlanEvaluation {
  TimeNs iteration_ns = 0;
  uint64_t peak_live_bytes = 0;
};
class PlanEvaluator {
 public:
  virtual ~PlanEvaluator() = default;
  virtual PlanEvaluation evaluate(const std::vector<OpId>& order, const SwapPlan& plan) = 0;
  virtual int evaluations() const = 0;
};

struct SwapContext {
  const Graph& graph;
  const Schedule& schedule;
  const IterationProfile& profile;
  const TransferModel& link;
  uint64_t device_capacity = 0;       // bytes the pool may use on the device
  PlanEvaluator* evaluator = nullptr; // null where no simulator is at hand (unit tests of rule-based policies)
};

class SwapPolicy {
 public:
  virtual ~SwapPolicy() = default;
  virtual SwapResult plan(const SwapContext& ctx) = 0;
};

using SwapRegistry = Registry<SwapPolicy>;
const SwapRegistry& swap_registry();

}  // namespace dlsim
