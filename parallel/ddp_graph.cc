// DDP's rank-local graph (rank_local_graph.h): the replicas are the training graph's own tensors; what DDP adds
// in memory is the reducer's bucket buffers. With gradient_as_bucket_view=False (DistributedDataParallel's
// default) Reducer::initialize_buckets allocates each bucket's flattened `gradients` tensor (at::empty, in the
// parameters' dtype) and copies each gradient into its view when the gradient is ready, all-reduces the bucket
// and copies the result back into .grad: the buckets are memory of their own, as large as the gradients they
// carry, held from the reducer's construction (and again after the rebuild in gradient-ready order at the end of
// the first backward, which frees the first layout's). dlsim holds the rebuilt buckets (the steady state) as
// persistent tensors. gradient_as_bucket_view=True, where .grad is a view of its bucket, is not modelled.
// Each bucket's all-reduce is issued when its last gradient is ready (Reducer::mark_variable_ready ->
// all_reduce_bucket), on the process group's NCCL stream, so it overlaps the rest of the backward.
#include "parallel/internal/layout_graphs.h"

#include <algorithm>

#include "common/config_error.h"

namespace dlsim::parallel::internal {

std::vector<DdpBucket> ddp_buckets(const std::vector<TrainedParameter>& params, const ParallelLayout& layout) {
  std::vector<ModelParameter> shapes;
  for (const TrainedParameter& p : params) shapes.push_back(p.model_parameter);
  DdpBucketCaps caps;
  caps.bucket_cap_bytes = layout.bucket_cap_mb << 20;
  return ddp_rebuilt_buckets(shapes, gradient_ready_order(shapes.size(), forward_use_order(params)), caps);
}

OpId bucket_ready_op(const std::vector<TrainedParameter>& params, const DdpBucket& b) {
  OpId last = -1;
  for (size_t i : b.parameters) last = std::max(last, params[i].grad_ready);
  if (last < 0) throw ConfigError("", 0, "parallel", "no backward op writes the gradients of a bucket");
  return last;
}

namespace {

DType dtype_named(const std::string& name) {
  for (DType t : {DType::F32, DType::BF16, DType::F16, DType::I64, DType::I32, DType::U8, DType::Bool})
    if (name == to_string(t)) return t;
  return DType::F32;
}

}  // namespace

RankLocalGraph ddp_graph(const Graph& training, const ParallelLayout& layout) {
  RankLocalGraph r{training, default_categories(training), {}};
  const std::vector<TrainedParameter> params = trained_parameters(r.graph);
  const std::vector<DdpBucket> buckets = ddp_buckets(params, layout);
  const OpId step = first_optimizer_op(r.graph);
  for (size_t i = 0; i < buckets.size(); ++i) {
    const DdpBucket& b = buckets[i];
    Tensor t;
    t.name = "ddp.bucket." + std::to_string(i);
    t.kind = TensorKind::Gradient;
    t.dtype = dtype_named(b.dtype);
    t.shape = {b.bytes / static_cast<int64_t>(dtype_bytes(t.dtype))};
    t.bytes = static_cast<uint64_t>(b.bytes);
    t.persistent = true;
    const TensorId id = add_tensor(r, std::move(t), MemoryCategory::CommunicationBuckets);
    // The bucket is filled at its last gradient's op (the copy into its view), all-reduced in place on the NCCL
    // stream, and read by the optimizer's first op: finalize_backward waits for every bucket's work and copies
    // the results back into .grad before the step.
    const OpId ready = bucket_ready_op(params, b);
    append_output(r.graph, ready, id);
    if (step >= 0) append_input(r.graph, step, id);
    r.collectives.push_back({.kind = CollectiveKind::AllReduce,
                             .issue_after = ready,
                             .needed_by = step,
                             .bytes = static_cast<uint64_t>(b.bytes),
                             .ranks = layout.ranks,
                             .stream_tag = kProcessGroupStream,
                             .phase = Phase::Backward,
                             .unit = r.graph.tensor(id).name,
                             .inputs = {id},
                             .outputs = {id}});
  }
  return r;
}

}  // namespace dlsim::parallel::internal
