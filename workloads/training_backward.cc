// The backward rule of each forward op kind (internal/training_synthesizer.h). What a backward op reads is what
// PyTorch 1.13's autograd saves for its forward op (the list at the top of training.cc); each rule creates the
// gradients of the inputs that need one and hands them to contribute(), which sums gradients that meet.
#include "workloads/internal/training_synthesizer.h"

#include "workloads/collective_graph_op.h"
#include "workloads/internal/model_builder_helpers.h"  // wider
#include "workloads/tensor_parallel.h"

namespace dlsim::workloads_internal {

void Synthesizer::backward_of(const Op& fwd_ref) {
  const Op fwd = fwd_ref;  // copied: emitting ops reallocates the op vector
  if (fwd.kind == OpKind::CrossEntropyLoss) return loss_backward(fwd);
  join_slice_grads(fwd);  // a split output's slices' gradients, cat into one
  all_reduce_grad(fwd.outputs[0]);
  const TensorId gy = take_grad(fwd.outputs[0]);
  if (gy == kNoTensor) return;  // nothing downstream needs this op's gradient
  const auto& in = fwd.inputs;
  const double fl = fwd.flops, n_out = static_cast<double>(numel(g_.tensor(fwd.outputs[0]).shape));
  switch (fwd.kind) {
    case OpKind::Conv2d: return conv_backward(fwd, gy, n_out);
    case OpKind::Linear: return linear_backward(fwd, gy, n_out);
    case OpKind::BatchNorm:
    case OpKind::LayerNorm: return norm_backward(fwd, gy, n_out);
    // threshold_backward(grad, result): the output, in place or not
    case OpKind::Relu: unary(fwd, gy, OpKind::ReluBwd, {fwd.outputs[0]}, n_out); return;
    // hardtanh_backward(grad, self): the input (its clone when in place)
    case OpKind::Relu6: unary(fwd, gy, OpKind::ReluBwd, {in.size() > 1 ? in[1] : in[0]}, n_out); return;
    case OpKind::MaxPool: unary(fwd, gy, OpKind::MaxPoolBwd, {in[0], fwd.outputs[1]}, n_out); return;
    case OpKind::AvgPool:
    case OpKind::AdaptiveAvgPool:
    case OpKind::GlobalAvgPool: unary(fwd, gy, OpKind::AvgPoolBwd, {in[0]}, fl); return;
    case OpKind::Dropout: unary(fwd, gy, OpKind::DropoutBwd, {fwd.outputs[1]}, n_out); return;
    case OpKind::Pad: unary(fwd, gy, OpKind::PadBwd, {}, 0); return;
    case OpKind::Softmax: return softmax_backward(fwd, gy, n_out);
    case OpKind::Gelu: return gelu_backward(fwd, gy, n_out);
    case OpKind::RmsNorm: return rms_norm_backward(fwd, gy, n_out);
    case OpKind::Rotary: unary(fwd, gy, OpKind::RotaryBwd, {in[1], in[2]}, fl); return;  // cos and sin
    case OpKind::RepeatKv: unary(fwd, gy, OpKind::RepeatKvBwd, {}, n_out); return;     // a sum over the repeats
    case OpKind::Silu: unary(fwd, gy, OpKind::SiluBwd, {in[0]}, fl); return;
    case OpKind::FlashAttention: return flash_attention_backward(fwd, gy);
    case OpKind::Copy: unary(fwd, gy, OpKind::Copy, {}, 0); return;
    case OpKind::Transpose: return transpose_backward(fwd, gy);
    case OpKind::Embedding: return embedding_backward(fwd, gy, n_out);
    case OpKind::Add: return add_backward(fwd, gy);
    case OpKind::Mul: return mul_backward(fwd, gy);
    case OpKind::MatMul: return product_backward(fwd, gy);
    case OpKind::Concat: return concat_backward(fwd, gy);
    // Megatron's g (workloads/tensor_parallel.h): a forward all-reduce of partial sums passes the gradient through
    // unchanged, every rank holding the whole of it; in place, so the gradient stays the tensor's
    case OpKind::AllReduce: contribute(fwd, in[0], gy); return;
    // sequence parallelism: an all-gather's gradient is reduce-scattered, a reduce-scatter's all-gathered
    case OpKind::AllGather:
    case OpKind::ReduceScatter: return sequence_collective_backward(fwd, gy);
    case OpKind::Broadcast: fail(fwd.name, std::string("no backward rule for a forward ") + to_string(fwd.kind));
    case OpKind::Other:
      // tanh_backward(grad, result): TanhBackward0 keeps the output only
      if (fwd.other == OtherOp::Tanh) return static_cast<void>(unary(fwd, gy, OpKind::Other, {fwd.outputs[0]}, 2 * n_out));
      if (fwd.other == OtherOp::Pow) return pow_backward(fwd, gy, n_out);
      if (fwd.other == OtherOp::Rsqrt) return rsqrt_backward(fwd, gy);
      if (fwd.other == OtherOp::NegHalf) return neg_half_backward(fwd, gy);
      if (fwd.other == OtherOp::CatHalves) return cat_halves_backward(fwd, gy);
      // MeanBackward1: grad.expand(sizes) / n, one kernel writing the input's size; it keeps only sizes
      if (fwd.other == OtherOp::Mean) {
        const double n_in = static_cast<double>(numel(g_.tensor(fwd.inputs[0]).shape));
        return static_cast<void>(unary(fwd, gy, OpKind::Other, {}, n_in));
      }
      return generic_backward(fwd, gy);
    default: return generic_backward(fwd, gy);
  }
}

// Megatron's f: the gradient of `t`, complete now that every reader of t has run its backward (t's producer runs
// its own next), is all-reduced in place over the tensor-parallel group, on the group's communication stream.
void Synthesizer::all_reduce_grad(TensorId t) {
  const auto it = grad_all_reduce_.find(t);
  const TensorId g = grad_[static_cast<size_t>(t)];
  if (it == grad_all_reduce_.end() || g == kNoTensor) return;
  Op o = collective_graph_op(g_.tensor(t).name + ".grad_all_reduce", OpKind::AllReduce, g_.tensor(g).bytes,
                             it->second.first, it->second.second, /*algorithm: auto*/ 2, kTensorParallelStreamTag,
                             Phase::Backward);
  o.inputs = o.outputs = {g};
  g_.add_op(std::move(o));
}

// The conjugate collective over the same group: the gradient of an all-gather's shard is the reduce-scatter of
// the gathered tensor's gradient, that of a reduce-scatter's input the all-gather of its shard's gradient.
void Synthesizer::sequence_collective_backward(const Op& fwd, TensorId gy) {
  const TensorId gx = grad_for(fwd, 0);
  if (gx == kNoTensor) return;
  const bool gather = fwd.kind == OpKind::AllGather;
  const TensorId whole = gather ? gy : gx;
  Op o = collective_graph_op(fwd.name + ".bwd", gather ? OpKind::ReduceScatter : OpKind::AllGather,
                             g_.tensor(whole).bytes, fwd.attr(Attr::ranks), fwd.attr(Attr::ranks_per_node),
                             fwd.attr(Attr::algorithm), fwd.attr(Attr::comm_stream), Phase::Backward);
  o.inputs = {gy};
  o.outputs = {gx};
  o.forward_op = fwd.id;
  g_.add_op(std::move(o));
  contribute(fwd, fwd.inputs[0], gx);
}

// What a linear layer's weight gradient reads: its input, but for a column-parallel layer under sequence
// parallelism, whose input is an all-gather's output: Megatron's LinearWithGradAccumulationAndAsyncCommunication
// keeps the S / tp shard instead and all-gathers it again in backward, issued before the input gradient's GEMM so
// that the two overlap. One re-gather serves every layer that reads the gathered tensor (q, k and v here, one
// fused QKV layer in Megatron); the gathered tensor itself is then freed after the forward.
TensorId Synthesizer::weight_grad_input(const Op& fwd) {
  const TensorId x = fwd.inputs[0];
  const auto by = gathered_by_.find(x);
  if (by == gathered_by_.end()) return x;
  if (const auto again = regathered_.find(x); again != regathered_.end()) return again->second;
  const Op gather = g_.op(by->second);
  Tensor t = g_.tensor(x);
  t.name += ".regathered";
  const TensorId y = add(std::move(t));
  Op o = collective_graph_op(gather.name + ".regather", OpKind::AllGather, g_.tensor(y).bytes,
                             gather.attr(Attr::ranks), gather.attr(Attr::ranks_per_node), gather.attr(Attr::algorithm),
                             gather.attr(Attr::comm_stream), Phase::Backward);
  o.inputs = gather.inputs;
  o.outputs = {y};
  o.forward_op = gather.id;
  g_.add_op(std::move(o));
  regathered_[x] = y;
  return y;
}

// The seed: d(loss)/d(logits) from the saved log-probabilities and the labels. PyTorch's cross_entropy is
// log_softmax + nll_loss, and so is its backward: nll_loss_backward writes the gradient of the log-probabilities
// (a tensor of their size, zeros but for one entry per row), _log_softmax_backward_data reads it with the saved
// log-probabilities and writes the logits' gradient, and autograd frees it after. All three are alive at once
// (3 x 1.16 GiB for Qwen2.5's 151,936-entry vocabulary at 2,048 tokens): the middle one is this op's workspace.
void Synthesizer::loss_backward(const Op& fwd) {
  TensorId gx = grad_for(fwd, 0);
  if (gx == kNoTensor) return;
  // The harness's fused kernel (TrainingOptions::nll_grad_workspace false) has no middle tensor.
  const TensorId nll_grad = opts_.nll_grad_workspace
                                ? tensor_like(fwd.outputs[1], fwd.name + ".nll_loss_grad", TensorKind::Workspace)
                                : kNoTensor;
  emit(fwd, OpKind::CrossEntropyLossBwd, ".bwd", {fwd.outputs[1], fwd.inputs[1]}, {gx}, 2 * fwd.flops / 5, nll_grad);
  contribute(fwd, fwd.inputs[0], gx);
}

// dx from dy and the weight, dW (and db) from dy and x, each with its cuDNN workspace.
void Synthesizer::conv_backward(const Op& fwd, TensorId gy, double n_out) {
  const auto& in = fwd.inputs;
  if (TensorId gx = grad_for(fwd, 0); gx != kNoTensor) {
    emit(fwd, OpKind::Conv2dBwdData, ".bwd_data", {gy, in[1]}, {gx}, fwd.flops, workspace_for(fwd, fwd.name + ".bwd_data"));
    contribute(fwd, in[0], gx);
  }
  TensorId gw = grad_for(fwd, 1), gb = grad_for(fwd, 2);
  std::vector<TensorId> outs;
  push(outs, gw);
  push(outs, gb);
  if (!outs.empty())
    emit(fwd, OpKind::Conv2dBwdFilter, ".bwd_filter", {gy, in[0]}, outs, fwd.flops + (gb != kNoTensor ? n_out : 0),
         workspace_for(fwd, fwd.name + ".bwd_filter"));
  contribute(fwd, in[1], gw);
  if (in.size() > 2) contribute(fwd, in[2], gb);
}

void Synthesizer::linear_backward(const Op& fwd, TensorId gy, double n_out) {
  const auto& in = fwd.inputs;
  const bool weight_grad = rg(in[1]) || (in.size() > 2 && rg(in[2]));
  const TensorId x = weight_grad ? weight_grad_input(fwd) : in[0];  // before dgrad, which it overlaps
  if (TensorId gx = grad_for(fwd, 0); gx != kNoTensor) {
    emit(fwd, OpKind::LinearBwdData, ".bwd_data", {gy, in[1]}, {gx}, fwd.flops);
    contribute(fwd, in[0], gx);
  }
  TensorId gw = grad_for(fwd, 1), gb = grad_for(fwd, 2);
  std::vector<TensorId> outs;
  push(outs, gw);
  push(outs, gb);
  if (!outs.empty())
    emit(fwd, OpKind::LinearBwdWeight, ".bwd_weight", {gy, x}, outs, fwd.flops + (gb != kNoTensor ? n_out : 0));
  contribute(fwd, in[1], gw);
  if (in.size() > 2) contribute(fwd, in[2], gb);
}

// Batch norm and layer norm: the input, the weight (layer norm: and bias), the saved statistics; with a fused
// ReLU (Kernels::Fused) also the output, whose sign is the ReLU's mask.
void Synthesizer::norm_backward(const Op& fwd, TensorId gy, double n_out) {
  const auto& in = fwd.inputs;
  std::vector<TensorId> ins = {gy, in[0], in[1]};
  if (fwd.kind == OpKind::LayerNorm) ins.push_back(in[2]);
  ins.push_back(fwd.outputs[1]);
  ins.push_back(fwd.outputs[2]);
  const bool fused_relu = fwd.kind == OpKind::BatchNorm && fwd.has_attr(Attr::fused_relu);
  if (fused_relu) ins.push_back(fwd.outputs[0]);  // the ReLU's mask is its output
  TensorId gx = grad_for(fwd, 0), gg = grad_for(fwd, 1), gbeta = grad_for(fwd, 2);
  std::vector<TensorId> outs;
  push(outs, gx);
  push(outs, gg);
  push(outs, gbeta);
  if (outs.empty()) return;
  emit(fwd, fwd.kind == OpKind::BatchNorm ? OpKind::BatchNormBwd : OpKind::LayerNormBwd, ".bwd", ins, outs,
       (fused_relu ? 9 : 8) * n_out);
  contribute(fwd, in[0], gx);
  contribute(fwd, in[1], gg);
  contribute(fwd, in[2], gbeta);
}

void Synthesizer::softmax_backward(const Op& fwd, TensorId gy, double n_out) {
  if (fwd.has_attr(Attr::fused_mask_dropout))  // dropout's mask and the probabilities; scale and mask: none
    unary(fwd, gy, OpKind::SoftmaxBwd, {fwd.outputs[1], fwd.outputs[2]}, 5 * n_out);
  else
    unary(fwd, gy, OpKind::SoftmaxBwd, {fwd.outputs[0]}, 3 * n_out);
}

void Synthesizer::gelu_backward(const Op& fwd, TensorId gy, double n_out) {
  const auto& in = fwd.inputs;
  if (!fwd.has_attr(Attr::fused_bias)) {
    unary(fwd, gy, OpKind::GeluBwd, {in[0]}, fwd.flops);
    return;
  }
  // bias_gelu_back: dx and the bias gradient (a column sum) at once
  TensorId gx = grad_for(fwd, 0), gb = grad_for(fwd, 1);
  std::vector<TensorId> outs;
  push(outs, gx);
  push(outs, gb);
  if (outs.empty()) return;
  emit(fwd, OpKind::GeluBwd, ".bwd", {gy, in[0], in[1]}, outs, fwd.flops + n_out);
  contribute(fwd, in[0], gx);
  contribute(fwd, in[1], gb);
}

// The fp32 input, rstd, the normalised input and the weight (model_builder_llama.cc).
void Synthesizer::rms_norm_backward(const Op& fwd, TensorId gy, double n_out) {
  const auto& in = fwd.inputs;
  const size_t first = fwd.attr(Attr::has_x_fp32) != 0 ? 2 : 1;  // outputs: y, (x fp32), rstd, normed
  const TensorId x32 = first == 2 ? fwd.outputs[1] : in[0];
  std::vector<TensorId> ins = {gy, x32, fwd.outputs[first], fwd.outputs[first + 1], in[1]};
  TensorId gx = grad_for(fwd, 0), gw = grad_for(fwd, 1);
  std::vector<TensorId> outs;
  push(outs, gx);
  push(outs, gw);
  if (outs.empty()) return;
  emit(fwd, OpKind::RmsNormBwd, ".bwd", ins, outs, 8 * n_out);
  contribute(fwd, in[0], gx);
  contribute(fwd, in[1], gw);
}

// q, k, v, the output and the log-sum-exp; P recomputed block by block.
void Synthesizer::flash_attention_backward(const Op& fwd, TensorId gy) {
  const auto& in = fwd.inputs;
  std::vector<TensorId> ins = {gy, in[0], in[1], in[2], fwd.outputs[0], fwd.outputs[1]}, outs(3, kNoTensor), real;
  for (size_t i = 0; i < 3; ++i) push(real, outs[i] = grad_for(fwd, i));
  if (real.empty()) return;
  Op& o = g_.op(emit(fwd, OpKind::FlashAttentionBwd, ".bwd", ins, real, 2.5 * fwd.flops));
  o.bytes_read = g_.tensor(gy).bytes + read_bytes(fwd, 0) + read_bytes(fwd, 1) + read_bytes(fwd, 2) +
                 g_.tensor(fwd.outputs[0]).bytes + g_.tensor(fwd.outputs[1]).bytes;  // q, k, v: slices of c_attn's
  for (size_t i = 0; i < 3; ++i) contribute(fwd, in[i], outs[i]);
}

// A transpose's gradient is the transpose by the inverse permutation.
void Synthesizer::transpose_backward(const Op& fwd, TensorId gy) {
  const OpId b = unary(fwd, gy, OpKind::Transpose, {}, 0);
  if (b < 0) return;
  const std::vector<int64_t> perm = fwd.attr_list(Attr::perm);
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse.at(static_cast<size_t>(perm[i])) = static_cast<int64_t>(i);
  g_.op(b).set_attr_list(Attr::perm, inverse);
}

void Synthesizer::embedding_backward(const Op& fwd, TensorId gy, double n_out) {
  TensorId gw = grad_for(fwd, 1);
  if (gw == kNoTensor) return;
  emit(fwd, OpKind::EmbeddingBwd, ".bwd", {gy, fwd.inputs[0]}, {gw}, n_out);
  contribute(fwd, fwd.inputs[1], gw);
}

// Mul of two tensors: MulBackward0, one kernel per operand that needs a gradient (grad * other, in the dtype the
// two promote to; the other operand's first, as the profiled step runs them), each cast to its operand's dtype where
// that is narrower (the engine's validate_outputs), as PyTorch does for autocast's bf16 x fp32 products. A broadcast
// operand's product is full-size and validate_outputs then sums it down to the operand's shape (a reduction kernel,
// after both products: RMSNorm's weight and rstd in the profiled step). Mul by a Python scalar (one input):
// grad * c, keeping nothing.
void Synthesizer::mul_backward(const Op& fwd, TensorId gy) {
  const auto& in = fwd.inputs;
  const double n = static_cast<double>(numel(g_.tensor(gy).shape));
  if (in.size() == 1) {
    unary(fwd, gy, OpKind::MulBwd, {}, n);
    return;
  }
  const std::vector<int64_t> gshape = g_.tensor(gy).shape;  // by value: add() below may move the graph's tensors
  // broadcast: fewer elements than the product (an operand read through a permuted view, as the rotary's q, has as
  // many and needs no reduction)
  auto broadcast = [&](size_t i) { return numel(g_.tensor(in[i]).shape) != numel(gshape); };
  auto needs_cast = [&](size_t i) {
    return rg(in[i]) && wider(g_.tensor(gy).dtype, g_.tensor(in[1 - i]).dtype) != g_.tensor(in[i]).dtype;
  };
  // a broadcast operand that needs no gradient (eager attention's scale): one kernel for the other, as before,
  // unless the other's gradient is cast down after its product (the rotary's bf16 q times the fp32 cos: below)
  if ((broadcast(0) && !rg(in[0]) && !needs_cast(1)) || (broadcast(1) && !rg(in[1]) && !needs_cast(0)))
    return product_backward(fwd, gy);
  struct Pending { size_t operand; TensorId product, grad; };
  std::vector<Pending> to_reduce;  // a broadcast operand's full-size product, summed after both
  for (size_t i : {size_t{1}, size_t{0}}) {
    if (!rg(in[i])) continue;
    const TensorId other = in[1 - i];
    // by value: new_grad and add append tensors, which may move the graph's tensors
    const DType x_dtype = g_.tensor(in[i]).dtype;
    const uint64_t x_bytes = g_.tensor(in[i]).bytes;
    const DType dt = wider(g_.tensor(gy).dtype, g_.tensor(other).dtype);
    TensorId gx = new_grad(in[i]);
    if (broadcast(i)) {
      Tensor full = g_.tensor(gx);
      full.name += ".unreduced";
      full.dtype = dt;
      full.shape = gshape;
      full.bytes = static_cast<uint64_t>(numel(gshape)) * dtype_bytes(dt);
      const TensorId gf = add(std::move(full));
      emit(fwd, OpKind::MulBwd, ".bwd" + std::to_string(i), {gy, other}, {gf}, n);
      to_reduce.push_back({i, gf, gx});
      continue;
    }
    if (dt == x_dtype) {
      emit(fwd, OpKind::MulBwd, ".bwd" + std::to_string(i), {gy, other}, {gx}, n);
    } else {
      Tensor wide = g_.tensor(gx);
      wide.name += "." + std::string(to_string(dt));
      wide.dtype = dt;
      wide.bytes = x_bytes / dtype_bytes(x_dtype) * dtype_bytes(dt);
      const TensorId gw = add(std::move(wide));
      emit(fwd, OpKind::MulBwd, ".bwd" + std::to_string(i), {gy, other}, {gw}, n);
      Op& c = g_.op(emit(fwd, OpKind::Copy, ".bwd_cast" + std::to_string(i), {gw}, {gx}, 0));
      c.attrs = Attrs();
      c.set_attr(Attr::cast, 1);
    }
    contribute(fwd, in[i], gx);
  }
  // sum_to's reduction (in the product's dtype; no Llama operand is narrower than its product)
  for (auto it = to_reduce.rbegin(); it != to_reduce.rend(); ++it) {
    Op& o = g_.op(emit(fwd, OpKind::Other, ".bwd_reduce" + std::to_string(it->operand), {it->product}, {it->grad}, n));
    o.other = OtherOp::ReduceBroadcast;
    contribute(fwd, in[it->operand], it->grad);
  }
}

// pow_backward(grad, self, c) = grad * (c * self.pow(c - 1)): three kernels (the power, the product by c, the
// product by the gradient), from the input PowBackward0 keeps; the two intermediates live only between them. For
// c = 2, self.pow(1) runs no kernel (the profiled step shows only the two products).
void Synthesizer::pow_backward(const Op& fwd, TensorId gy, double n_out) {
  TensorId gx = grad_for(fwd, 0);
  if (gx == kNoTensor) return;
  const TensorId x = fwd.inputs[0];
  auto scratch = [&](const std::string& suffix) { return tensor_like(x, fwd.name + suffix, TensorKind::Activation); };
  const bool square = fwd.attr(Attr::exponent) == 2;
  const TensorId sq = square ? x : scratch(".bwd_pow.out"), scaled = scratch(".bwd_mul_exponent.out");
  if (!square) emit(fwd, OpKind::Other, ".bwd_pow", {x}, {sq}, 2 * n_out);
  Op& m = g_.op(emit(fwd, OpKind::Mul, ".bwd_mul_exponent", {sq}, {scaled}, n_out));
  m.other = OtherOp::None;
  m.attrs = Attrs();  // products: not pow's exponent
  Op& p = g_.op(emit(fwd, OpKind::Mul, ".bwd_mul_grad", {gy, scaled}, {gx}, n_out));
  p.other = OtherOp::None;
  p.attrs = Attrs();
  contribute(fwd, x, gx);
}

// rsqrt's backward, -0.5 * grad * result^3 (RsqrtBackward0 keeps the result): three kernels, as pow_backward's.
void Synthesizer::rsqrt_backward(const Op& fwd, TensorId gy) {
  TensorId gx = grad_for(fwd, 0);
  if (gx == kNoTensor) return;
  const TensorId r = fwd.outputs[0];
  const double n = static_cast<double>(numel(g_.tensor(r).shape));
  auto scratch = [&](const std::string& suffix) { return tensor_like(r, fwd.name + suffix, TensorKind::Activation); };
  const TensorId cube = scratch(".bwd_pow.out"), scaled = scratch(".bwd_mul_half.out");
  Op& c = g_.op(emit(fwd, OpKind::Other, ".bwd_pow", {r}, {cube}, 2 * n));
  c.other = OtherOp::Pow;
  c.attrs = Attrs();
  Op& m = g_.op(emit(fwd, OpKind::Mul, ".bwd_mul_half", {cube}, {scaled}, n));
  m.other = OtherOp::None;
  Op& p = g_.op(emit(fwd, OpKind::Mul, ".bwd_mul_grad", {gy, scaled}, {gx}, n));
  p.other = OtherOp::None;
  contribute(fwd, fwd.inputs[0], gx);
}

// rotate_half's backward (the rotary, model_builder_llama.cc), as autograd runs it. CatBackward0 narrows the
// gradient into views: no kernel, the neg's gradient is the cat's, read in half. Each of x's two slices is a
// SliceBackward0, slice_backward(): zeros of x's shape (a fill kernel) and the slice's gradient copied into its half
// (a copy kernel); NegBackward0 negates its half first. The two (and the product by cos) meet in x's gradient.
void Synthesizer::cat_halves_backward(const Op& fwd, TensorId gy) {
  if (rg(fwd.inputs[0])) contribute(fwd, fwd.inputs[0], gy);  // -x2's gradient: the first half of gy, a view
  slice_backward(fwd, 1, gy, ".bwd_slice");
}

void Synthesizer::neg_half_backward(const Op& fwd, TensorId gy) {
  if (!rg(fwd.inputs[0])) return;
  const TensorId g2 = tensor_like(fwd.outputs[0], fwd.name + ".bwd.out", TensorKind::Gradient);
  const uint64_t half = g_.tensor(g2).bytes;
  Op& o = g_.op(emit(fwd, OpKind::Other, ".bwd", {gy}, {g2}, static_cast<double>(numel(g_.tensor(g2).shape))));
  o.bytes_read = half;  // gy is the cat's whole gradient; the neg reads its first half
  slice_backward(fwd, 0, g2, ".bwd_slice");
}

// slice_backward(grad, sizes, -1, start, end, 1): a zero-filled gradient of input i's shape, then `src` copied
// into its half; handed to contribute(), which sums it with x's other gradients.
void Synthesizer::slice_backward(const Op& fwd, size_t i, TensorId src, const std::string& suffix) {
  const TensorId gx = grad_for(fwd, i);
  if (gx == kNoTensor) return;
  const uint64_t half = g_.tensor(gx).bytes / 2;
  Op& z = g_.op(emit(fwd, OpKind::Other, suffix + ".zeros", {}, {gx}, 0));
  z.other = OtherOp::Fill;
  z.attrs = Attrs();
  Op& c = g_.op(emit(fwd, OpKind::Copy, suffix + ".copy", {src, gx}, {gx}, 0));
  c.other = OtherOp::None;
  c.attrs = Attrs();
  c.bytes_read = c.bytes_written = half;
  contribute(fwd, fwd.inputs[i], gx);
}

// MatMul (and a Mul with a broadcast operand that needs no gradient): d/da needs b, d/db needs a.
void Synthesizer::product_backward(const Op& fwd, TensorId gy) {
  const auto& in = fwd.inputs;
  TensorId ga = grad_for(fwd, 0), gb = grad_for(fwd, 1);
  std::vector<TensorId> ins = {gy}, outs;
  if (ga != kNoTensor) ins.push_back(in[1]);
  if (gb != kNoTensor) ins.push_back(in[0]);
  push(outs, ga);
  push(outs, gb);
  if (outs.empty()) return;
  emit(fwd, fwd.kind == OpKind::Mul ? OpKind::MulBwd : OpKind::MatMulBwd, ".bwd", ins, outs,
       fwd.flops * static_cast<double>(outs.size()));
  contribute(fwd, in[0], ga);
  contribute(fwd, in[1], gb);
}

void Synthesizer::concat_backward(const Op& fwd, TensorId gy) {
  const auto& in = fwd.inputs;
  std::vector<TensorId> outs(in.size(), kNoTensor), real;
  for (size_t i = 0; i < in.size(); ++i) push(real, outs[i] = grad_for(fwd, i));
  if (real.empty()) return;
  emit(fwd, OpKind::ConcatBwd, ".bwd", {gy}, real, 0);
  for (size_t i = 0; i < in.size(); ++i) contribute(fwd, in[i], outs[i]);
}

// An op without a dedicated rule (LRN, select, tanh): its backward reads the inputs and the output.
void Synthesizer::generic_backward(const Op& fwd, TensorId gy) {
  const auto& in = fwd.inputs;
  std::vector<TensorId> ins = {gy}, outs(in.size(), kNoTensor), real;
  for (TensorId t : in) ins.push_back(t);
  ins.push_back(fwd.outputs[0]);
  for (size_t i = 0; i < in.size(); ++i) push(real, outs[i] = grad_for(fwd, i));
  if (real.empty()) return;
  emit(fwd, OpKind::Other, ".bwd", ins, real, fwd.flops);
  for (size_t i = 0; i < in.size(); ++i) contribute(fwd, in[i], outs[i]);
}

// One-input ops: dx from dy and the saved tensors. The backward op, or -1 when x needs no gradient.
OpId Synthesizer::unary(const Op& fwd, TensorId gy, OpKind kind, std::vector<TensorId> saved, double flops) {
  TensorId gx = grad_for(fwd, 0);
  if (gx == kNoTensor) return -1;
  std::vector<TensorId> ins = {gy};
  ins.insert(ins.end(), saved.begin(), saved.end());
  const OpId b = emit(fwd, kind, ".bwd", ins, {gx}, flops);
  contribute(fwd, fwd.inputs[0], gx);
  return b;
}

// Add passes its gradient through to both operands (the same tensor, as AddBackward0 does); an operand
// that was broadcast receives the gradient summed down to its shape.
void Synthesizer::add_backward(const Op& fwd, TensorId gy) {
  for (size_t i = 0; i < fwd.inputs.size(); ++i) {  // one input: a sum with a Python scalar
    TensorId x = fwd.inputs[i];
    if (!rg(x)) continue;
    if (g_.tensor(x).shape == g_.tensor(gy).shape && g_.tensor(x).dtype != g_.tensor(gy).dtype) {
      // A promoting add (autocast's bf16 branch + the fp32 residual): autograd casts the gradient to the
      // operand's dtype (the engine's validate_outputs), so the 16-bit branch's backward runs in 16 bits.
      TensorId gx = new_grad(x);
      Op& o = g_.op(emit(fwd, OpKind::Copy, ".bwd_cast" + std::to_string(i), {gy}, {gx}, 0));
      o.attrs = Attrs();
      o.set_attr(Attr::cast, 1);
      contribute(fwd, x, gx);
    } else if (g_.tensor(x).shape == g_.tensor(gy).shape) {
      contribute(fwd, x, gy);
    } else {
      TensorId gx = new_grad(x);
      Op& o = g_.op(emit(fwd, OpKind::Other, ".bwd_reduce", {gy}, {gx}, static_cast<double>(numel(g_.tensor(gy).shape))));
      o.other = OtherOp::ReduceBroadcast;  // with the Add's attributes, as its backward
      contribute(fwd, x, gx);
    }
  }
}

}  // namespace dlsim::workloads_internal
