#pragma once
// The training-graph synthesis (workloads/training.h) as one class in four files: training.cc copies the forward
// ops and keeps the gradient bookkeeping, training_slices.cc that of split views, training_backward.cc holds one
// backward rule per op kind, and training_optimizer.cc AMP's unscale and the optimizer step.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "workloads/graph.h"
#include "workloads/training_options.h"

namespace dlsim::workloads_internal {

class Synthesizer {
 public:
  Synthesizer(const Graph& f, const TrainingOptions& opts);

  // forward (copied), backward in reverse order, the optimizer step
  Graph run();

 private:
  const Graph& f_;
  const TrainingOptions& opts_;
  Graph g_;
  std::vector<TensorId> tmap_;  // forward tensor -> training tensor
  std::vector<OpId> fwd_ops_;   // the copied forward ops
  std::vector<char> learnable_, requires_grad_;
  std::vector<TensorId> grad_;  // training tensor -> its gradient so far (kNoTensor: none yet)
  std::vector<int> holders_;    // gradient tensor -> how many tensors currently hold it as their gradient
  // Megatron's f (workloads/tensor_parallel.h): tensor -> (ranks, ranks per node) of the all-reduce its complete
  // gradient goes through before its producer's backward reads it.
  std::map<TensorId, std::pair<int64_t, int64_t>> grad_all_reduce_;
  // Sequence parallelism: a forward all-gather's output -> the all-gather; and -> its re-gather in backward.
  std::map<TensorId, OpId> gathered_by_;
  std::map<TensorId, TensorId> regathered_;

  // torch.split's views (OtherOp::Split), elided as the other views are: a reader of a slice reads the split
  // tensor, which so lives as long as any slice is read. Its gradient of the slice has the slice's shape; the
  // slices' gradients are joined by one cat into the split tensor's gradient (SplitWithSizesBackward's cat, zeros
  // for a slice that got none) before that tensor's producer runs its backward.
  struct Slice {
    TensorId source = kNoTensor;  // the split tensor (training graph)
    size_t part = 0;
  };
  struct Split {
    std::string name;
    int64_t axis = 0;
    std::vector<TensorId> slices;  // the split's outputs (forward graph): the slices' shapes
  };
  std::map<TensorId, Slice> slice_of_;                        // forward tensor: a slice, or a view of one
  std::map<TensorId, Split> splits_;                          // split tensor (training graph) -> its split
  std::map<std::pair<OpId, size_t>, Slice> slice_reads_;      // (training op, input index) -> the slice it reads
  std::map<TensorId, Slice> slice_grad_;                      // gradient of a slice -> the slice
  std::map<TensorId, std::vector<TensorId>> slice_grads_;     // split tensor -> its slices' gradients so far

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const;

  // training.cc: the forward pass and the bookkeeping every backward rule uses
  void check_precision() const;
  void copy_forward();
  void scale_loss();
  void mark_requires_grad();
  TensorId add(Tensor t);
  // A new tensor of `like`'s dtype, shape and bytes, named `name`, of `kind`: a temporary, a gradient, a state.
  TensorId tensor_like(TensorId like, std::string name, TensorKind kind, bool persistent = false);
  TensorId map(TensorId ft);
  TensorId workspace_for(const Op& o, const std::string& name);
  bool rg(TensorId t) const { return requires_grad_[static_cast<size_t>(t)] != 0; }
  TensorId new_grad(TensorId of);
  // A backward (or optimizer) op of `fwd`'s: it carries fwd's attributes (a backend reads the forward's stride,
  // padding... from it).
  OpId emit(const Op& fwd, OpKind kind, const std::string& suffix, std::vector<TensorId> in, std::vector<TensorId> out,
            double flops, TensorId workspace = kNoTensor, Phase phase = Phase::Backward);
  TensorId take_grad(TensorId t);
  void contribute(const Op& fwd, TensorId t, TensorId g);
  TensorId grad_for(const Op& o, size_t i);
  // training_slices.cc: the split's views and their gradients
  void split_views(const Op& fo);
  void note_slice_reads(const Op& fo, OpId id);
  TensorId slice_grad(const Slice& s);
  void contribute_slice(const Op& fwd, const Slice& s, TensorId g);
  void join_slice_grads(const Op& fwd);
  uint64_t read_bytes(const Op& fwd, size_t i) const;  // input i's bytes, a slice's when it reads one
  static void push(std::vector<TensorId>& v, TensorId t) {
    if (t != kNoTensor) v.push_back(t);
  }

  // training_backward.cc: the backward of one forward op, by its kind
  void backward_of(const Op& fwd_ref);
  void all_reduce_grad(TensorId t);
  void sequence_collective_backward(const Op& fwd, TensorId gy);
  TensorId weight_grad_input(const Op& fwd);
  void loss_backward(const Op& fwd);
  void conv_backward(const Op& fwd, TensorId gy, double n_out);
  void linear_backward(const Op& fwd, TensorId gy, double n_out);
  void norm_backward(const Op& fwd, TensorId gy, double n_out);
  void softmax_backward(const Op& fwd, TensorId gy, double n_out);
  void gelu_backward(const Op& fwd, TensorId gy, double n_out);
  void rms_norm_backward(const Op& fwd, TensorId gy, double n_out);
  void flash_attention_backward(const Op& fwd, TensorId gy);
  void transpose_backward(const Op& fwd, TensorId gy);
  void embedding_backward(const Op& fwd, TensorId gy, double n_out);
  void add_backward(const Op& fwd, TensorId gy);
  void mul_backward(const Op& fwd, TensorId gy);
  void pow_backward(const Op& fwd, TensorId gy, double n_out);
  void rsqrt_backward(const Op& fwd, TensorId gy);
  void neg_half_backward(const Op& fwd, TensorId gy);
  void cat_halves_backward(const Op& fwd, TensorId gy);
  void slice_backward(const Op& fwd, size_t i, TensorId src, const std::string& suffix);
  void product_backward(const Op& fwd, TensorId gy);
  void concat_backward(const Op& fwd, TensorId gy);
  void generic_backward(const Op& fwd, TensorId gy);
  OpId unary(const Op& fwd, TensorId gy, OpKind kind, std::vector<TensorId> saved, double flops);

  // training_optimizer.cc
  void unscale_gradients();
  void optimizer();
  void charge_foreach_sgd(DType dtype, const std::vector<std::pair<OpId, int64_t>>& updates);
};

}  // namespace dlsim::workloads_internal
