// ZeRO-1 and ZeRO-2's rank-local graph (rank_local_graph.h), after the ZeRO paper (Rajbhandari et al., 2020) and
// DeepSpeed's stage 1 and 2: parameters stay replicated; each rank keeps and updates only its partition of the
// optimizer state (stage 1) and of the gradients (stage 2), then the updated parameters are all-gathered.
//  - The partition: each parameter's dim-0 chunk on rank 0 (model_state_sharding.h), the rule FSDP2 uses.
//    DeepSpeed partitions one flat buffer of all parameters instead; the two differ by less than a row per
//    parameter on a rank.
//  - Stage 1 reduces gradients as DDP does (its bucket buffers, persistent; ddp_graph.cc), then each rank
//    updates its partition.
//  - Stage 2: each full gradient is freed once its bucket (DDP's bucket order and caps) has been reduce-scattered;
//    the bucket's flat buffer lives only at the op that completes it, and the gradient's partition, made there,
//    until the optimizer step. DeepSpeed's fixed-size reduction buffer (reduce_bucket_size) and its contiguous
//    gradient partition are not modelled as such.
#include "parallel/internal/layout_graphs.h"

#include <algorithm>

namespace dlsim::parallel::internal {

RankLocalGraph zero_graph(const Graph& training, const ParallelLayout& layout) {
  RankLocalGraph r = ddp_graph(training, layout);  // stage 1's buckets and all-reduces
  Graph& g = r.graph;
  const std::vector<TrainedParameter> params = trained_parameters(g);
  const int world = static_cast<int>(layout.ranks);
  for (const TrainedParameter& p : params) shard_states(g, p, fsdp_local_shard(p.model_parameter, world, 0).local_rows);
  const OpId step = first_optimizer_op(g);
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
      append_output(g, ready, bucket_tensor);
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
        append_output(g, ready, gsid);
      }
      r.collectives.push_back(CollectiveSite{CollectiveKind::ReduceScatter, ready, step, static_cast<uint64_t>(b.bytes),
                                             layout.ranks, g.tensor(bucket_tensor).name, {bucket_tensor}});
      ++bucket_tensor;
    }
  }
  uint64_t param_bytes = 0;
  for (const TrainedParameter& p : params) param_bytes += g.tensor(p.weight).bytes;
  OpId last_update = -1;
  for (const TrainedParameter& p : params) last_update = std::max(last_update, p.update);
  r.collectives.push_back(CollectiveSite{CollectiveKind::AllGather, last_update, -1, param_bytes, layout.ranks,
                                         "parameters", {}});
  rescale_optimizer_ops(g, params);
  return r;
}

}  // namespace dlsim::parallel::internal
