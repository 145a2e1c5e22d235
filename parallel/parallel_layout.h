#pragma once
// How the ranks of a data-parallel job split the model states, as PyTorch (and DeepSpeed's ZeRO) run it: the
// layout an experiment's `parallel:` section chooses (experiment/parallel_section.h reads it). Plain data: what
// each layout does to one rank's graph is parallel/rank_local_graph.h.
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/graph.h"

namespace dlsim::parallel {

enum class Layout : uint8_t {
  Single,  // one GPU, no wrapper: the plain run
  Ddp,     // DistributedDataParallel: full replicas, gradients all-reduced in buckets
  Fsdp,    // FSDP2 (fully_shard), i.e. ZeRO-3: parameters, gradients and optimizer state sharded
  Zero,    // ZeRO-1 (optimizer state sharded) or ZeRO-2 (and gradients), parameters replicated
};
const char* to_string(Layout l);  // "single", "dp", "fsdp", "zero"

// The FSDP units: one per model block (Graph::blocks: a transformer layer, a ResNet block) plus the root, as
// torchtitan and the FSDP2 tutorial wrap; or the root alone (fully_shard(model) only).
enum class FsdpWrap : uint8_t { Blocks, Root };
const char* to_string(FsdpWrap w);  // "blocks", "root"

// The dtypes a MixedPrecisionPolicy may name, by the names the `parallel:` section takes ("fp32", "bf16",
// "fp16"); nullopt for another name.
std::optional<DType> mixed_precision_dtype(const std::string& name);
const char* mixed_precision_name(DType t);  // "fp32", "bf16", "fp16"; "?" for another dtype

// The most ranks a layout may name: far above any job run today, low enough that byte counts stay exact.
inline constexpr int64_t kMaxRanks = 1 << 20;

struct ParallelLayout {
  Layout layout = Layout::Single;
  int64_t ranks = 1;           // data-parallel ranks (dp, fsdp)
  int zero_stage = 0;          // 1 or 2 for Layout::Zero
  // DDP and ZeRO: DistributedDataParallel(bucket_cap_mb=25); the first bucket closes at 1 MiB as PyTorch's.
  int64_t bucket_cap_mb = 25;
  // FSDP: fully_shard(reshard_after_forward=True): free a unit's gathered parameters after its forward and gather
  // them again before its backward. The root unit is never resharded after forward (FSDP2's lazy_init says so).
  bool reshard_after_forward = true;
  FsdpWrap wrap = FsdpWrap::Blocks;
  // FSDP's MixedPrecisionPolicy: the dtype parameters are all-gathered (and computed) in, and gradients
  // reduce-scattered in; nullopt: the parameter's own dtype (param) and the param dtype (reduce), as PyTorch.
  std::optional<DType> param_dtype;
  std::optional<DType> reduce_dtype;
  // The dtype of the model's own parameters when the training graph was built to compute in param_dtype (as
  // FSDP2's policy computes on an fp32 model, without autocast: experiment/parallel_precision.h): the sharded
  // parameters, their gradients and the optimizer state stay in it. nullopt: the training graph's weights' dtype.
  std::optional<DType> shard_dtype;
  // Tensor parallelism composed with the layout (`parallel: {fsdp: F, tp: T}`): the experiment passes these to
  // the Llama builder's ModelOptions (workloads/model_options.h), which builds one rank's graph of the tp group;
  // the data-parallel layout then runs over `ranks` (F) such ranks. The job has ranks x tp GPUs.
  int64_t tp = 1;
  bool sequence_parallel = false;
  bool tp_across_nodes = false;
  // The data-parallel group's ranks on one node (CollectiveOp::ranks_per_node; 0: as many as fit). Under tp the
  // tp group fills a node first (Megatron's and torchtitan's placement), so the data-parallel group has
  // max(1, gpus_per_node / tp) ranks on a node, capped at `ranks`: set when the hardware is known
  // (experiment/run_experiment.cc, dp_ranks_per_node).
  int64_t ranks_per_node = 0;
  // ZeRO-Offload (Ren et al., ATC'21; DeepSpeed's offload_optimizer: {device: cpu}) on a ZeRO-2 layout: each rank's
  // optimizer step works on its partition of the parameters, which the host updates and copies back before the
  // all-gather (parallel/zero_graph.cc). Set by the experiment when its swap policy is `zero-offload`.
  bool offload_optimizer = false;
  int line = 0;  // where the experiment file set it (0: not set, or built in code): later errors still say where
  // "dp=8", "fsdp=8", "fsdp=8(reshard_after_forward=false,param_dtype=bf16)", "zero2,dp=8": naming every
  // setting that differs from its default, for run labels and sweep keys; "single" for the plain run.
  // With tensor parallelism: "fsdp=64,tp=8", "tp=2(sequence_parallel)".
  std::string label() const;
  std::string data_parallel_label() const;  // label() without the tensor-parallel part
  // Whether the data-parallel wrapper is absent: one rank (dp: 1, fsdp: 1: no wrapper is needed on one GPU, and
  // the plain run is what people run there); the rank-local graph is then the (tensor-parallel) training graph.
  bool data_parallel_single() const { return layout == Layout::Single || ranks == 1; }
  // Whether the job is one GPU: no data-parallel wrapper and no tensor parallelism.
  bool is_single() const { return data_parallel_single() && tp == 1; }
  // The job's GPUs: data-parallel ranks x tensor-parallel ranks.
  int64_t gpus() const { return (data_parallel_single() ? 1 : ranks) * tp; }
};

}  // namespace dlsim::parallel
