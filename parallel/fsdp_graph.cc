// FSDP2's rank-local graph (rank_local_graph.h), as fully_shard runs a step (torch/distributed/fsdp/_fully_shard):
//  - Each parameter is a DTensor shard between steps: dim-0 chunks of ceil(rows / world) rows, storage padded to
//    a whole chunk (model_state_sharding.h; rank 0, which holds a full chunk of every parameter). The optimizer
//    updates the shard: its state follows the unpadded local rows, its gradient the padded shard.
//  - A unit (one per model block plus the root, or the root alone) all-gathers its parameters, in the
//    MixedPrecisionPolicy's param_dtype, before its forward: every one of them is alive from the unit's first
//    forward op. With reshard_after_forward they are freed after its last forward op and gathered again before
//    its first backward op, freed after its last; without it (and always for the root, which FSDP2 never
//    reshards after forward) they stay until the unit's backward is done. The training graph's parameter tensor
//    becomes the forward's gathered copy (the compute ops read it as before), ".regathered" the backward's; a
//    recomputed forward op reads the regathered copy (Graph::replay_source), as checkpointing inside FSDP2 does.
//  - Autograd writes each unsharded gradient in the param dtype; the unit's post-backward hook copies them into
//    one reduce-scatter input (the padded unsharded size, in reduce_dtype), frees them and reduce-scatters into
//    the sharded gradient, which the optimizer reads. The copy stands on the unit's last backward op: the
//    unsharded gradients are last used there and the input buffer made there.
// The collectives (collective_site.h), as FSDP2 issues them:
//  - forward: a unit's all-gather in its pre-forward hook, right before its first forward op, on the all-gather
//    stream. That is FSDP2's implicit forward prefetching: the all-gather of unit i+1 is issued after unit i's
//    compute (in CPU order) but on another stream, so it runs while unit i computes whenever the CPU is ahead of
//    the GPU; explicit prefetching (set_modules_to_forward_prefetch) is not the default and is not modelled.
//  - backward: a resharded unit's all-gather in its pre-backward hook, and FSDP2's default backward prefetch of
//    one unit: the pre-backward of a unit also issues the all-gather of the unit whose backward comes next, so
//    each resharded unit's backward all-gather is issued right before the first backward op of the unit before
//    it in backward order (the first one's before its own).
//  - a unit's reduce-scatter after its post-backward copy, on the reduce-scatter stream, writing the sharded
//    gradients; the optimizer's first op reads every sharded gradient, as the root's finalize_backward makes the
//    current stream wait for the last reduce-scatter before the step.
// The gathered parameters are written by their all-gather: their lifetime starts there (a prefetched unit's
// while the unit before computes) and ends after the unit's last forward op (resharded) or its backward.
// Mixed precision (MixedPrecisionPolicy): the gathered copies and autograd's unsharded gradients take param_dtype,
// and a cast of either to the dtype it already has is removed (elide_casts.h); the shards, sharded gradients and
// optimizer state keep the parameter's own dtype, or ParallelLayout::shard_dtype where the training graph was
// built to compute in param_dtype (experiment/parallel_precision.h: the ops' dtypes and costs are then bf16's).
// Not modelled here: the flat all-gather output FSDP2 copies out of (a unit's gathered bytes again, for the
// copy-out) and the copy-in and copy-out kernels.
#include "parallel/internal/layout_graphs.h"

#include <algorithm>
#include <map>

#include "parallel/internal/elide_casts.h"

#include "workloads/shape.h"

namespace dlsim::parallel::internal {

namespace {

struct Unit {
  std::string name;
  OpId fwd_first = -1, fwd_last = -1, bwd_first = -1, bwd_last = -1;
  std::vector<size_t> params;
  bool reshard = false;
  OpId post_backward = -1;  // where the unsharded gradients are last used and the reduce-scatter input made
  std::vector<TensorId> shards, gathered, regathered, grad_shards;
  uint64_t padded_elements = 0;  // chunk_rows * world rows of every parameter
  uint64_t message_bytes = 0;    // the unit's gathered bytes: its all-gathers' S
};

// The unit spans: a block's forward ops, and the backward ops of its forward ops; the root from the first
// forward op to the last backward op.
std::vector<Unit> units_of(const Graph& g, const ParallelLayout& layout) {
  const bool blocks = layout.wrap == FsdpWrap::Blocks;
  std::vector<Unit> units(1 + (blocks ? g.blocks.size() : 0));
  units[0].name = "(root)";
  for (size_t b = 0; blocks && b < g.blocks.size(); ++b) units[b + 1].name = g.blocks[b];
  auto span = [](OpId& first, OpId& last, OpId id) {
    if (first < 0) first = id;
    last = id;
  };
  for (const Op& o : g.ops()) {
    if (o.phase == Phase::Forward) {
      span(units[0].fwd_first, units[0].fwd_last, o.id);
      if (blocks && o.block >= 0) span(units[static_cast<size_t>(o.block) + 1].fwd_first, units[static_cast<size_t>(o.block) + 1].fwd_last, o.id);
    } else if (o.phase == Phase::Backward) {
      span(units[0].bwd_first, units[0].bwd_last, o.id);
      const int32_t b = o.forward_op >= 0 ? g.op(o.forward_op).block : -1;
      if (blocks && b >= 0) span(units[static_cast<size_t>(b) + 1].bwd_first, units[static_cast<size_t>(b) + 1].bwd_last, o.id);
    }
  }
  return units;
}

}  // namespace

RankLocalGraph fsdp_graph(const Graph& training, const ParallelLayout& layout) {
  RankLocalGraph r{training, default_categories(training), {}};
  Graph& g = r.graph;
  // Each parameter's own dtype (its shard's, its sharded gradient's and its optimizer state's) and the dtype it
  // is gathered and computed in. The gathered copies and the unsharded gradients take the param dtype first, so
  // that autocast's casts of them to that dtype go (elide_casts.h) before the units are read off the graph.
  std::map<TensorId, DType> own;
  for (const TrainedParameter& p : trained_parameters(g)) {
    const DType od = layout.shard_dtype.value_or(g.tensor(p.weight).dtype);
    own[p.weight] = od;
    const DType pd = layout.param_dtype.value_or(od);
    for (TensorId t : {p.weight, p.grad}) {
      Tensor& x = g.tensor(t);
      x.dtype = pd;
      x.bytes = static_cast<uint64_t>(numel(x.shape)) * dtype_bytes(pd);
    }
  }
  elide_same_dtype_casts(g);
  std::vector<TrainedParameter> params = trained_parameters(g);
  for (TrainedParameter& p : params) {  // the element size the shards are made of
    const DType od = own.at(p.weight);
    p.model_parameter.dtype = to_string(od);
    p.model_parameter.element_bytes = static_cast<int64_t>(dtype_bytes(od));
  }
  const int world = static_cast<int>(layout.ranks);
  std::vector<Unit> units = units_of(g, layout);
  for (size_t i = 0; i < params.size(); ++i) {
    const int32_t b = params[i].block;
    units[layout.wrap == FsdpWrap::Blocks && b >= 0 ? static_cast<size_t>(b) + 1 : 0].params.push_back(i);
  }
  const OpId step = first_optimizer_op(g);
  for (size_t ui = 0; ui < units.size(); ++ui) {
    Unit& u = units[ui];
    if (u.params.empty() || u.fwd_first < 0) continue;
    u.reshard = layout.reshard_after_forward && ui != 0 && u.fwd_last >= 0 && u.bwd_first >= 0;
    u.post_backward = u.bwd_last;
    for (size_t i : u.params) u.post_backward = std::max(u.post_backward, params[i].grad_ready);
    if (u.post_backward < 0) u.post_backward = units[0].bwd_last;
    DType reduce = DType::F32;
    for (size_t i : u.params) {
      const TrainedParameter& p = params[i];
      const Tensor orig = g.tensor(p.weight);
      const DType od = own.at(p.weight);
      const FsdpLocalShard s = fsdp_local_shard(p.model_parameter, world, 0);
      const DType pd = layout.param_dtype.value_or(od);
      reduce = layout.reduce_dtype.value_or(pd);
      const int64_t rows = orig.shape.empty() ? 1 : orig.shape[0];
      const uint64_t row_elems = rows > 0 ? static_cast<uint64_t>(numel(orig.shape) / rows) : 0;
      const uint64_t padded = static_cast<uint64_t>(s.chunk_rows) * static_cast<uint64_t>(world) * row_elems;
      u.padded_elements += padded;

      Tensor shard = orig;  // what the rank keeps between steps and the optimizer updates
      shard.name = orig.name + ".shard";
      shard.dtype = od;
      if (shard.shape.empty()) shard.shape = {s.chunk_rows};
      else shard.shape[0] = s.chunk_rows;
      shard.bytes = static_cast<uint64_t>(s.storage_bytes);
      const TensorId sid = add_tensor(r, std::move(shard), MemoryCategory::Weights);
      u.shards.push_back(sid);
      replace_in_phase(g, Phase::Optimizer, p.weight, sid);

      Tensor& w = g.tensor(p.weight);  // the forward's gathered copy, in the param dtype, padded storage
      w.persistent = false;
      w.dtype = pd;
      w.bytes = padded * dtype_bytes(pd);
      r.categories[static_cast<size_t>(p.weight)] = MemoryCategory::GatheredParameters;
      u.gathered.push_back(p.weight);
      if (u.reshard) {
        Tensor again = g.tensor(p.weight);
        again.name = orig.name + ".regathered";
        const TensorId aid = add_tensor(r, std::move(again), MemoryCategory::GatheredParameters);
        replace_in_phase(g, Phase::Backward, p.weight, aid);
        g.replay_source[p.weight] = aid;  // a recomputation runs in the unit's backward, after the regather
        u.regathered.push_back(aid);
      }

      Tensor& grad = g.tensor(p.grad);  // autograd's unsharded gradient, in the param dtype
      grad.dtype = pd;
      grad.bytes = static_cast<uint64_t>(numel(grad.shape)) * dtype_bytes(pd);
      Tensor gs = g.tensor(p.grad);
      gs.name = orig.name + ".grad_shard";
      gs.dtype = od;
      gs.shape = g.tensor(sid).shape;
      gs.bytes = static_cast<uint64_t>(s.storage_bytes);
      gs.grad_of = sid;
      const TensorId gsid = add_tensor(r, std::move(gs), MemoryCategory::Gradients);
      replace_in_phase(g, Phase::Optimizer, p.grad, gsid);
      append_input(g, u.post_backward, p.grad);
      u.grad_shards.push_back(gsid);
      if (layout.shard_dtype) {  // a graph built in the param dtype: the optimizer works on the shards' dtype
        for (TensorId st : p.states) g.tensor(st).dtype = od;
        const TensorId ws = g.op(p.update).workspace;
        if (ws != kNoTensor) g.tensor(ws).dtype = od;
        if (p.foreach_sqrt != kNoTensor) g.tensor(p.foreach_sqrt).dtype = od;
      }
      shard_states(g, p, s.local_rows);
    }
    for (TensorId t : u.gathered) append_input(g, u.fwd_first, t);
    for (TensorId t : u.gathered) append_input(g, u.reshard ? u.fwd_last : u.post_backward, t);
    for (TensorId t : u.regathered) append_input(g, u.bwd_first, t);
    for (TensorId t : u.regathered) append_input(g, u.post_backward, t);
    Tensor rs;
    rs.name = "fsdp.reduce_scatter_input." + u.name;
    rs.kind = TensorKind::Gradient;
    rs.dtype = reduce;
    rs.shape = {static_cast<int64_t>(u.padded_elements)};
    rs.bytes = u.padded_elements * dtype_bytes(reduce);
    const TensorId rsid = add_tensor(r, std::move(rs), MemoryCategory::CommunicationBuckets);
    append_output(g, u.post_backward, rsid);

    uint64_t gathered_bytes = 0;
    for (TensorId t : u.gathered) gathered_bytes += g.tensor(t).bytes;
    u.message_bytes = gathered_bytes;
    r.collectives.push_back({.kind = CollectiveKind::AllGather,
                             .issue_after = u.fwd_first - 1,
                             .needed_by = u.fwd_first,
                             .bytes = gathered_bytes,
                             .ranks = layout.ranks,
                             .stream_tag = kFsdpAllGatherStream,
                             .phase = Phase::Forward,
                             .unit = u.name,
                             .inputs = u.shards,
                             .outputs = u.gathered});
    r.collectives.push_back({.kind = CollectiveKind::ReduceScatter,
                             .issue_after = u.post_backward,
                             .needed_by = step,
                             .bytes = g.tensor(rsid).bytes,
                             .ranks = layout.ranks,
                             .stream_tag = kFsdpReduceScatterStream,
                             .phase = Phase::Backward,
                             .unit = u.name,
                             .inputs = {rsid},
                             .outputs = u.grad_shards});
    if (step >= 0)
      for (TensorId t : u.grad_shards) append_input(g, step, t);
  }
  // The backward all-gathers, in backward order, each issued one unit early (FSDP2's default backward prefetch).
  std::vector<const Unit*> again;
  for (const Unit& u : units)
    if (u.reshard && !u.regathered.empty()) again.push_back(&u);
  std::sort(again.begin(), again.end(), [](const Unit* a, const Unit* b) { return a->bwd_first < b->bwd_first; });
  for (size_t k = 0; k < again.size(); ++k) {
    const Unit& u = *again[k];
    r.collectives.push_back({.kind = CollectiveKind::AllGather,
                             .issue_after = (k == 0 ? u.bwd_first : again[k - 1]->bwd_first) - 1,
                             .needed_by = u.bwd_first,
                             .bytes = u.message_bytes,
                             .ranks = layout.ranks,
                             .stream_tag = kFsdpAllGatherStream,
                             .phase = Phase::Backward,
                             .unit = u.name,
                             .inputs = u.shards,
                             .outputs = u.regathered});
  }
  rescale_optimizer_ops(g, params);
  return r;
}

}  // namespace dlsim::parallel::internal
