#include "workloads/tensor_parallel.h"

#include "common/config_error.h"
#include "workloads/collective_graph_op.h"
#include "workloads/internal/model_builder_helpers.h"

namespace dlsim {

using namespace workloads_internal;

namespace {
constexpr int64_t kMegatronVocabMultiple = 128;  // Megatron-LM's --make-vocab-size-divisible-by default
}  // namespace

void check_tensor_parallel(const ModelOptions& opts, const std::string& model) {
  if (opts.tp < 1 || opts.tp > kMaxTensorParallel)
    throw ConfigError(model, 0, "tp",
                      "tensor-parallel degree must be in [1, " + std::to_string(kMaxTensorParallel) + "], got " +
                          std::to_string(opts.tp));
}

namespace {

// (B, S, H) <-> (B, S / tp, H): the sequence axis split over the ranks.
std::vector<int64_t> with_seq(std::vector<int64_t> s, int64_t seq) {
  s.at(1) = seq;
  return s;
}

OpId sequence_collective(Graph& g, const std::string& name, OpKind kind, TensorId in, TensorId out,
                         const ModelOptions& opts) {
  const TensorId whole = kind == OpKind::AllGather ? out : in;  // nccl-tests' S: the gathered array
  Op op = collective_graph_op(name, kind, g.tensor(whole).bytes, opts.tp, tp_ranks_per_node(opts),
                              /*algorithm: auto*/ 2, kTensorParallelStreamTag, Phase::Forward);
  op.inputs = {in};
  op.outputs = {out};
  return g.add_op(std::move(op));
}

}  // namespace

int64_t tp_shard(const ModelOptions& opts, int64_t size, const std::string& field, const std::string& model) {
  if (size % opts.tp != 0)
    throw ConfigError(model, 0, field,
                      field + " " + std::to_string(size) + " is not divisible by the tensor-parallel degree tp " +
                          std::to_string(opts.tp));
  return size / opts.tp;
}

int64_t tp_ranks_per_node(const ModelOptions& opts) { return opts.tp_across_nodes ? 0 : opts.tp; }

int64_t tp_vocab_shard(const ModelOptions& opts, int64_t vocab) {
  if (opts.tp == 1) return vocab;
  const int64_t multiple = kMegatronVocabMultiple * opts.tp;
  return (vocab + multiple - 1) / multiple * multiple / opts.tp;
}

TensorId tp_vocab_parallel_loss_stats(ModelBuilder& b, TensorId logits, const ModelOptions& opts,
                                      const std::string& name) {
  if (opts.tp == 1) return kNoTensor;
  Graph& g = b.graph();
  const std::vector<int64_t> s = g.tensor(logits).shape;
  const int64_t rows = numel(s) / s.back();
  TensorId prev = logits;
  for (const char* stat : {"max", "target_logit", "sum_exp"}) {
    const std::string n = name + ".vocab_parallel_" + stat;
    const TensorId t = new_tensor(g, n + ".out", TensorKind::Activation, DType::F32, {rows});
    Op op = collective_graph_op(n, OpKind::AllReduce, g.tensor(t).bytes, opts.tp, tp_ranks_per_node(opts),
                                /*algorithm: auto*/ 2, kTensorParallelStreamTag, Phase::Forward);
    // each after the one before (the shifted logits need the maximum, the sum the target's logit masked)
    op.inputs = {prev};
    op.outputs = {t};
    g.add_op(std::move(op));
    prev = t;
  }
  return prev;
}

TensorId tp_enter(ModelBuilder& b, TensorId x, const ModelOptions& opts, const std::string& name) {
  if (opts.tp == 1) return x;
  Graph& g = b.graph();
  const Tensor& t = g.tensor(x);
  if (opts.sequence_parallel) {  // Megatron's all-gather of the S / tp tokens into the whole sequence
    const int64_t shard = t.shape.at(1);
    const TensorId y =
        new_tensor(g, name + ".out", TensorKind::Activation, t.dtype, with_seq(t.shape, shard * opts.tp));
    sequence_collective(g, name, OpKind::AllGather, x, y, opts);
    return y;
  }
  const TensorId y = new_tensor(g, name + ".out", TensorKind::Activation, t.dtype, t.shape);
  emit(g, name, OpKind::Reshape, {x}, {y}, 0,
       {{Attr::view, 1}, {Attr::grad_all_reduce, opts.tp}, {Attr::ranks_per_node, tp_ranks_per_node(opts)}});
  return y;
}

TensorId tp_exit(ModelBuilder& b, TensorId y, const ModelOptions& opts, const std::string& name) {
  if (opts.tp == 1) return y;
  Graph& g = b.graph();
  if (opts.sequence_parallel) {  // Megatron's reduce-scatter of the partial sums onto S / tp tokens a rank
    const Tensor& t = g.tensor(y);
    const int64_t seq = t.shape.at(1);
    if (seq % opts.tp != 0)
      throw ConfigError(g.name, 0, "seq_len",
                        "sequence parallelism splits the sequence over tp " + std::to_string(opts.tp) +
                            " ranks; the sequence length " + std::to_string(seq) + " does not divide");
    const TensorId s = new_tensor(g, name + ".out", TensorKind::Activation, t.dtype, with_seq(t.shape, seq / opts.tp));
    sequence_collective(g, name, OpKind::ReduceScatter, y, s, opts);
    return s;
  }
  Op op = collective_graph_op(name, OpKind::AllReduce, g.tensor(y).bytes, opts.tp, tp_ranks_per_node(opts),
                              /*algorithm: auto*/ 2, kTensorParallelStreamTag, Phase::Forward);
  op.inputs = {y};
  op.outputs = {y};
  g.add_op(std::move(op));
  return y;
}

}  // namespace dlsim
