// ZeRO-1 and ZeRO-2's rank-local graph (rank_local_graph.h), after the ZeRO paper (Rajbhandari et al., 2020) and
// DeepSpeed's stage 1 and 2: parameters stay replicated; each rank keeps and updates only its partition of the
// optimizer state (stage 1) and of the gradients (stage 2), then the updated parameters are all-gathered.
//  - The partition: each parameter's dim-0 chunk on rank 0 (model_state_sharding.h), the rule FSDP2 uses.
//    DeepSpeed partitions one flat buffer of all parameters instead; the two differ by less than a row per
//    parameter on a rank.
//  - Stage 1 reduces gradients as DDP does (its bucket buffers, persistent, all-reduced during the backward;
//    ddp_graph.cc), then each rank updates its partition: PyTorch's ZeRO-1 (ZeroRedundancyOptimizer over DDP).
//    DeepSpeed's stage 1 differs in when: with overlap_comm false (its default) reduce_gradients runs after the
//    backward, in reduce_bucket_size buckets (5e8 elements), each reduced to the ranks that own its partitions
//    (average_tensor) or all-reduced (reduce_scatter: false); that post-backward reduction is not modelled.
//  - Stage 2: each full gradient is freed once its bucket (DDP's bucket order and caps) has been reduce-scattered;
//    the bucket's flat buffer lives only at the op that completes it, and the gradient's partition, made there,
//    until the optimizer step. The bucket is reduce-scattered on the process group's stream as soon as its last
//    gradient is ready (DeepSpeed's stage 2 reduces from its gradient hooks), writing the gradients' partitions,
//    which the update ops read.
//  - After the step, the updated parameters are all-gathered (every rank's partition to every rank), in place on
//    the replicas; the next iteration's forward waits for it (the iteration's end joins every stream). DeepSpeed's fixed-size reduction buffer (reduce_bucket_size) and its contiguous
//    gradient partition are not modelled as such.
//  - ZeRO-Offload (layout.offload_optimizer, stage 2 only: the paper builds it on ZeRO-2): each update reads and
//    writes the rank's partition of its parameter, a tensor of its own, instead of the replica; the swap policy
//    runs the update on the host, so the gradient partition goes out after its reduce-scatter, the host keeps the
//    fp32 master partition and the moments, and the updated partition comes back to the device, from where the
//    all-gather fills the replicas. DeepSpeed's partition is a slice of its flat parameter buffer; here it is a
//    persistent tensor beside the replica (the partition's bytes more on the device).
#include "parallel/internal/layout_graphs.h"

#include <algorithm>

#include "common/config_error.h"

namespace dlsim::parallel::internal {

namespace {

// ZeRO-Offload: the rank's partition of p's weight, which its update reads and writes in place of the replica.
TensorId partition_of(RankLocalGraph& r, const TrainedParameter& p, int world) {
  Graph& g = r.graph;
  const FsdpLocalShard s = fsdp_local_shard(p.model_parameter, world, 0);
  Tensor part = g.tensor(p.weight);
  part.name += ".partition";
  part.bytes = static_cast<uint64_t>(s.local_bytes);
  if (part.shape.empty()) part.shape = {s.local_rows};
  else part.shape[0] = s.local_rows;
  part.persistent = true;
  const TensorId id = add_tensor(r, std::move(part), MemoryCategory::Weights);
  replace_in_phase(g, Phase::Optimizer, p.weight, id);
  return id;
}

}  // namespace

RankLocalGraph zero_graph(const Graph& training, const ParallelLayout& layout) {
  RankLocalGraph r = ddp_graph(training, layout);  // stage 1's buckets and all-reduces
  Graph& g = r.graph;
  const std::vector<TrainedParameter> params = trained_parameters(g);
  const int world = static_cast<int>(layout.ranks);
  for (const TrainedParameter& p : params) shard_states(g, p, fsdp_local_shard(p.model_parameter, world, 0).local_rows);
  const OpId step = first_optimizer_op(g);
  if (layout.offload_optimizer && layout.zero_stage != 2)
    throw ConfigError("", 0, "zero", "swap 'zero-offload' partitions the optimizer as ZeRO-Offload does, on ZeRO-2 (Ren et "
                      "al. 2021): set zero: 2");
  if (layout.zero_stage == 2) {
    // The buckets become transient and the all-reduces reduce-scatters.
    r.collectives.clear();
    for (size_t i = 0; i < r.graph.tensors().size(); ++i)
      if (r.categories[i] == MemoryCategory::CommunicationBuckets) {
        Tensor& b = g.tensor(static_cast<TensorId>(i));
        b.persistent = false;
        b.name = "zero.bucket" + b.name.substr(std::string("ddp.bucket").size());
      }
    const std::vector<DdpBucket> buckets = ddp_buckets(params, layout);
    TensorId bucket_tensor = static_cast<TensorId>(training.tensors().size());  // ddp_graph added them in order
    for (const DdpBucket& b : buckets) {
      const OpId ready = bucket_ready_op(params, b);
      if (step >= 0) {  // no longer read by the step (ddp_graph's all-reduced bucket is)
        std::vector<TensorId>& in = g.op(step).inputs;
        in.erase(std::remove(in.begin(), in.end(), bucket_tensor), in.end());
      }
      std::vector<TensorId> grad_shards;
      for (size_t i : b.parameters) {
        const TrainedParameter& p = params[i];
        const FsdpLocalShard s = fsdp_local_shard(p.model_parameter, world, 0);
        Tensor gs = g.tensor(p.grad);
        gs.name = g.tensor(p.weight).name + ".grad_shard";
        if (gs.shape.empty()) gs.shape = {s.local_rows};
        else gs.shape[0] = s.local_rows;
        gs.bytes = static_cast<uint64_t>(s.local_bytes) / dtype_bytes(g.tensor(p.weight).dtype) * dtype_bytes(gs.dtype);
        const TensorId gsid = add_tensor(r, std::move(gs), MemoryCategory::Gradients);
        replace_in_phase(g, Phase::Optimizer, p.grad, gsid);
        append_input(g, ready, p.grad);
        grad_shards.push_back(gsid);
      }
      r.collectives.push_back({.kind = CollectiveKind::ReduceScatter,
                               .issue_after = ready,
                               .needed_by = step,
                               .bytes = static_cast<uint64_t>(b.bytes),
                               .ranks = layout.ranks,
                               .stream_tag = kProcessGroupStream,
                               .phase = Phase::Backward,
                               .unit = g.tensor(bucket_tensor).name,
                               .inputs = {bucket_tensor},
                               .outputs = std::move(grad_shards)});
      ++bucket_tensor;
    }
  }
  CollectiveSite gather;
  gather.kind = CollectiveKind::AllGather;
  for (const TrainedParameter& p : params) {
    gather.bytes += g.tensor(p.weight).bytes;
    gather.issue_after = std::max(gather.issue_after, p.update);
    gather.outputs.push_back(p.weight);
    gather.inputs.push_back(layout.offload_optimizer ? partition_of(r, p, world) : p.weight);
  }
  gather.needed_by = -1;
  gather.ranks = layout.ranks;
  gather.stream_tag = kProcessGroupStream;
  gather.phase = Phase::Optimizer;
  gather.unit = "parameters";
  r.collectives.push_back(std::move(gather));
  rescale_optimizer_ops(g, params);
  return r;
}

}  // namespace dlsim::parallel::internal
