// The training synthesis of torch.split's views (OtherOp::Split; internal/training_synthesizer.h). In PyTorch a
// split's outputs are views of the split tensor's storage: a reader of one keeps the whole storage alive, and
// autograd's SplitWithSizesBackward waits for the gradients of all the slices and joins them with one cat (zeros
// for a slice that got none) into the split tensor's gradient. GPT-2's c_attn is the case: one (B, S, 3H) output
// split into q, k and v, which scaled_dot_product_attention reads and keeps (its backward returns three gradients,
// cat into one (B, S, 3H) gradient that c_attn's backward reads).
//
// Here the split is elided like the other views: each reader reads the split tensor itself (so its lifetime is the
// storage's), and its backward rule asks grad_for() for the gradient of what it read: a tensor of the slice's
// shape, which contribute() holds per slice until the split tensor's producer runs its backward.
#include "workloads/internal/training_synthesizer.h"

namespace dlsim::workloads_internal {

void Synthesizer::split_views(const Op& fo) {
  if (fo.inputs.size() != 1 || fo.outputs.empty()) fail(fo.name, "a split has one input and at least one output");
  if (slice_of_.count(fo.inputs[0]) != 0) fail(fo.name, "a split of a split's slice is not modelled");
  const TensorId source = map(fo.inputs[0]);
  if (splits_.count(source) != 0) fail(fo.name, "the tensor is split twice");
  splits_[source] = {fo.name, fo.attr(Attr::axis), fo.outputs};
  for (size_t k = 0; k < fo.outputs.size(); ++k) {
    tmap_.at(static_cast<size_t>(fo.outputs[k])) = source;
    slice_of_[fo.outputs[k]] = {source, k};
  }
}

// Only FlashAttention's backward rule counts the bytes of the slices it reads (read_bytes); another reader would
// write slice-shaped gradients but count the whole split tensor for each saved slice, so it is refused until its
// rule does the same.
void Synthesizer::note_slice_reads(const Op& fo, OpId id) {
  for (size_t k = 0; k < fo.inputs.size(); ++k) {
    const auto s = slice_of_.find(fo.inputs[k]);
    if (s == slice_of_.end()) continue;
    if (fo.kind != OpKind::FlashAttention)
      fail(fo.name, std::string("a ") + to_string(fo.kind) + " reads a split's slice; only FlashAttention may");
    slice_reads_[{id, k}] = s->second;
  }
}

TensorId Synthesizer::slice_grad(const Slice& s) {
  const Split& split = splits_.at(s.source);
  Tensor t = f_.tensor(split.slices.at(s.part));
  t.name = "grad." + t.name;
  t.kind = TensorKind::Gradient;
  t.persistent = t.learnable = false;
  t.grad_of = s.source;  // the storage it is a gradient of a part of
  const TensorId g = add(std::move(t));
  slice_grad_[g] = s;
  return g;
}

// A slice read twice gets its gradients summed in place into the first (both are fresh tensors of its own).
void Synthesizer::contribute_slice(const Op& fwd, const Slice& s, TensorId g) {
  std::vector<TensorId>& parts = slice_grads_[s.source];
  parts.resize(splits_.at(s.source).slices.size(), kNoTensor);
  TensorId& old = parts.at(s.part);
  if (old == kNoTensor) {
    old = g;
    return;
  }
  emit(fwd, OpKind::GradAccumulate, ".grad_acc", {old, g}, {old}, static_cast<double>(numel(g_.tensor(g).shape)));
}

// Before fwd (the split tensor's producer) reads its output's gradient: the cat of the slices' gradients, handed
// to contribute() as one more gradient of the split tensor.
void Synthesizer::join_slice_grads(const Op& fwd) {
  const TensorId t = fwd.outputs[0];
  const auto it = slice_grads_.find(t);
  if (it == slice_grads_.end()) return;
  std::vector<TensorId> parts = std::move(it->second);
  slice_grads_.erase(it);
  const Split& split = splits_.at(t);
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k] != kNoTensor) continue;
    parts[k] = slice_grad({t, k});
    Op& z = g_.op(emit(fwd, OpKind::Other, ".bwd_split_zeros" + std::to_string(k), {}, {parts[k]}, 0));
    z.other = OtherOp::Fill;
    z.attrs = Attrs();
  }
  const TensorId gx = new_grad(t);
  Op& c = g_.op(emit(fwd, OpKind::Concat, "", parts, {gx}, 0));
  c.name = split.name + ".bwd";
  c.other = OtherOp::None;
  c.attrs = Attrs();
  c.set_attr(Attr::axis, split.axis);
  contribute(fwd, t, gx);
}

uint64_t Synthesizer::read_bytes(const Op& fwd, size_t i) const {
  const auto s = slice_reads_.find({fwd.id, i});
  if (s == slice_reads_.end()) return g_.tensor(fwd.inputs.at(i)).bytes;
  return f_.tensor(splits_.at(s->second.source).slices.at(s->second.part)).bytes;
}

}  // namespace dlsim::workloads_internal
