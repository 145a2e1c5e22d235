// Training-graph synthesis: forward ops (copied), backward ops in reverse order, one optimizer op per
// parameter. What each backward op reads is what PyTorch 1.13's autograd saves for its forward op
// (derivatives.yaml), so "activations read by a backward op" is the saved-for-backward set:
//   conv, linear: input (and weight)        batch norm: input, weight and the per-channel save_mean/invstd
//   relu: output    relu6: input (a clone, in place)    max-pool: input and int64 indices     avg-pool: input
//   1x1 adaptive pool (a mean; MeanBackward1 saves self): input    dropout: mask       add, concat, pad, reshape: nothing
//   softmax: output    layer norm: input, weight, bias, mean, rstd    gelu: input    matmul: both operands
//   embedding: indices    cross-entropy: log-probabilities and labels    autocast cast: nothing
//   RMS norm: fp32 input, rstd, normalised input, weight (2.x)    rotary: cos and sin    repeat_kv: nothing
//   silu: input    FlashAttention: q, k, v, output and log-sum-exp (docs/models.md)
//   mul: both operands (by a Python scalar: nothing)    tanh: output    pow: input    rsqrt: output
//   mean: nothing    rotate_half's neg and cat: nothing (their backward: neg, slice_backward's fill and copy)
// Deliberate differences from PyTorch, all small:
//   - Views (flatten, reshape, split) are elided: the consumer reads the viewed tensor, as the storage is shared
//     (a split's slices: training_slices.cc).
//   - The backward of concat writes each input's gradient as a tensor of its own (PyTorch returns narrow
//     views of the output gradient, keeping it alive instead); the bytes are the same.
//   - Dropout's mask is bool, as CUDA's fused dropout keeps; PyTorch on the CPU keeps a float mask.
//   - Weight gradients follow zero_grad(set_to_none=True), PyTorch's default: a weight's gradient is
//     allocated by the backward op that first produces it and is last used (so freed) by the optimizer step.
//     Momentum and Adam state are persistent: the lowering allocates them before the first iteration, and a run
//     with a lazy first step (experiment/first_step.h) moves them to the first optimizer step, as torch.optim
//     makes them (SGD's momentum buffers as clones of the first gradients).
//     PyTorch keeps every gradient until zero_grad; the foreach Adam's temporary, sized for all of them, is
//     allocated while all are alive (training_optimizer.cc), so the step's peak is PyTorch's.
//   - Cross entropy's backward holds nll_loss_backward's gradient of the log-probabilities as its workspace
//     (training_backward.cc).
// Gradients meeting at a tensor used by several ops are summed as autograd's InputBuffer does: in place into
// whichever of the two gradients no other tensor shares, else into a new tensor.
#include "workloads/training.h"

#include "common/config_error.h"
#include "workloads/internal/training_synthesizer.h"
#include "workloads/memory_format.h"

namespace dlsim::workloads_internal {
namespace {

// The cuDNN workspace of a convolution (forward, backward-data, backward-filter). Modelling choice, not a
// measurement: an eighth of the op's input+output activation bytes, capped at 64 MiB, in the range of what
// PyTorch's heuristic algorithm choice (cudnn.benchmark off) asks for on ImageNet shapes. The real-GPU
// harness can replace it with cudnnGet*WorkspaceSize figures.
constexpr double kWorkspaceFraction = 0.125;
constexpr uint64_t kWorkspaceCap = 64ull << 20;

// Inputs through which a gradient flows (the others are indices, labels or running statistics).
bool differentiable_input(const Op& o, size_t i) {
  switch (o.kind) {
    case OpKind::BatchNorm: return i < 3;
    case OpKind::CrossEntropyLoss: return i == 0;
    case OpKind::Embedding: return i == 1;
    case OpKind::Relu6: return i == 0;  // input 1 is autograd's saved clone
    default: return true;
  }
}

bool is_view(OpKind k) { return k == OpKind::Flatten || k == OpKind::Reshape; }

}  // namespace

Synthesizer::Synthesizer(const Graph& f, const TrainingOptions& opts) : f_(f), opts_(opts) {
  g_.name = f.name;
  g_.batch = f.batch;
  g_.blocks = f.blocks;  // copied forward ops keep their Op::block
}

Graph Synthesizer::run() {
  check_precision();
  copy_forward();
  scale_loss();
  mark_requires_grad();
  for (size_t i = fwd_ops_.size(); i-- > 0;) backward_of(g_.op(fwd_ops_[i]));
  optimizer();
  return std::move(g_);
}

void Synthesizer::fail(const std::string& key, const std::string& msg) const { throw ConfigError(f_.name, 0, key, msg); }

// The forward graph must have been built for the precision asked for (ModelBuilder's BuildOptions).
void Synthesizer::check_precision() const {
  bool has_bf16 = false, has_f16 = false, bf16_weight = false;
  for (const Tensor& t : f_.tensors()) {
    has_bf16 |= t.dtype == DType::BF16;
    has_f16 |= t.dtype == DType::F16;
    bf16_weight |= t.learnable && t.dtype == DType::BF16;
  }
  const std::string p = to_string(opts_.precision);
  switch (opts_.precision) {
    case Precision::FP32:
      if (has_bf16 || has_f16) fail("precision", "fp32 asked for, but the forward graph has 16-bit tensors");
      break;
    case Precision::MixedFP16:
      if (!has_f16 || has_bf16) fail("precision", p + " asked for, but the forward graph has no fp16 activations");
      break;
    case Precision::MixedBF16:
      if (!has_bf16 || has_f16 || bf16_weight)
        fail("precision", p + " asked for, but the forward graph is not bf16 activations over fp32 weights");
      break;
    case Precision::BF16:
      if (!bf16_weight || has_f16) fail("precision", p + " asked for, but the forward graph's weights are not bf16");
      break;
  }
}

void Synthesizer::copy_forward() {
  tmap_.assign(f_.tensors().size(), kNoTensor);
  bool has_loss = false;
  for (const Op& fo : f_.ops()) {
    if (fo.phase != Phase::Forward) fail(fo.name, "the forward graph holds a non-forward op");
    if (fo.kind == OpKind::Other && fo.other == OtherOp::Split) {  // elided: views of slices (training_slices.cc)
      split_views(fo);
      continue;
    }
    if (is_view(fo.kind)) {  // elided: the view's readers read the viewed tensor
      if (fo.inputs.size() != 1 || fo.outputs.size() != 1) fail(fo.name, "a view has one input and one output");
      tmap_.at(static_cast<size_t>(fo.outputs[0])) = map(fo.inputs[0]);
      if (const auto s = slice_of_.find(fo.inputs[0]); s != slice_of_.end()) slice_of_[fo.outputs[0]] = s->second;
      if (fo.kind == OpKind::Reshape && fo.attr(Attr::grad_all_reduce) > 1)  // Megatron's f on the viewed tensor
        grad_all_reduce_[map(fo.inputs[0])] = {fo.attr(Attr::grad_all_reduce), fo.attr(Attr::ranks_per_node)};
      continue;
    }
    if (fo.outputs.empty()) fail(fo.name, "op has no output");
    has_loss |= fo.kind == OpKind::CrossEntropyLoss;
    Op o = fo;
    for (TensorId& t : o.inputs) t = map(t);
    for (TensorId& t : o.outputs) t = map(t);
    if (o.kind == OpKind::Conv2d) o.workspace = workspace_for(o, o.name);
    const OpId id = g_.add_op(std::move(o));
    note_slice_reads(fo, id);
    fwd_ops_.push_back(id);
    if (g_.op(id).kind == OpKind::AllGather) gathered_by_[g_.op(id).outputs[0]] = id;  // sequence parallelism
  }
  if (!has_loss) fail("loss", "the forward graph has no loss op; end it with ModelBuilder::cross_entropy_loss");
}

// torch.cuda.amp.GradScaler's scaler.scale(loss): the loss times the scale (a one-element kernel) before the
// backward pass. Its gradient is the seed the loss's backward starts from, so nothing else changes.
void Synthesizer::scale_loss() {
  if (opts_.precision != Precision::MixedFP16) return;
  const Op* loss = nullptr;
  for (OpId id : fwd_ops_)
    if (g_.op(id).kind == OpKind::CrossEntropyLoss) loss = &g_.op(id);
  Tensor scale;
  scale.name = "amp.loss_scale";
  scale.kind = TensorKind::Input;
  scale.dtype = DType::F32;
  scale.shape = {1};
  scale.bytes = 4;
  Tensor out = scale;
  out.name = "amp.scaled_loss";
  out.kind = TensorKind::Activation;
  const TensorId l = loss->outputs[0], sc = add(std::move(scale)), y = add(std::move(out));
  Op o;
  o.name = "amp.scale_loss";
  o.kind = OpKind::Mul;
  o.phase = Phase::Forward;
  o.inputs = {l, sc};
  o.outputs = {y};
  o.bytes_read = 8;
  o.bytes_written = 4;
  o.flops = 1;
  o.set_attr(Attr::amp_scale_loss, 1);
  g_.add_op(std::move(o));
}

void Synthesizer::mark_requires_grad() {
  for (OpId id : fwd_ops_) {
    const Op& o = g_.op(id);
    for (size_t i = 0; i < o.inputs.size(); ++i)
      if (differentiable_input(o, i) && g_.tensor(o.inputs[i]).kind == TensorKind::Weight)
        learnable_[static_cast<size_t>(o.inputs[i])] = requires_grad_[static_cast<size_t>(o.inputs[i])] = 1;
  }
  for (OpId id : fwd_ops_) {
    const Op& o = g_.op(id);
    bool any = false;
    for (size_t i = 0; i < o.inputs.size(); ++i) any |= differentiable_input(o, i) && rg(o.inputs[i]);
    if (any) requires_grad_[static_cast<size_t>(o.outputs[0])] = 1;  // only output 0 carries a gradient
  }
}

TensorId Synthesizer::add(Tensor t) {
  TensorId id = g_.add_tensor(std::move(t));
  learnable_.push_back(0);
  requires_grad_.push_back(0);
  grad_.push_back(kNoTensor);
  holders_.push_back(0);
  return id;
}

TensorId Synthesizer::map(TensorId ft) {
  if (ft < 0 || static_cast<size_t>(ft) >= f_.tensors().size()) fail("tensor", "op refers to tensor " + std::to_string(ft) + " which does not exist");
  if (tmap_[static_cast<size_t>(ft)] == kNoTensor) tmap_[static_cast<size_t>(ft)] = add(f_.tensor(ft));
  return tmap_[static_cast<size_t>(ft)];
}

TensorId Synthesizer::workspace_for(const Op& o, const std::string& name) {
  if (!opts_.conv_workspace) return kNoTensor;
  uint64_t io = g_.tensor(o.inputs[0]).bytes + g_.tensor(o.outputs[0]).bytes;
  uint64_t bytes = std::min<uint64_t>(kWorkspaceCap, static_cast<uint64_t>(kWorkspaceFraction * static_cast<double>(io)));
  if (bytes == 0) return kNoTensor;
  Tensor t;
  t.name = name + ".workspace";
  t.kind = TensorKind::Workspace;
  t.dtype = DType::U8;
  t.shape = {static_cast<int64_t>(bytes)};
  t.bytes = bytes;
  return add(std::move(t));
}

TensorId Synthesizer::tensor_like(TensorId like, std::string name, TensorKind kind, bool persistent) {
  const Tensor& src = g_.tensor(like);
  Tensor t;
  t.name = std::move(name);
  t.kind = kind;
  t.dtype = src.dtype;
  t.shape = src.shape;
  t.bytes = src.bytes;
  t.persistent = persistent;
  return add(std::move(t));  // src is not read after add: add may move the graph's tensors
}

TensorId Synthesizer::new_grad(TensorId of) {
  const TensorId g = tensor_like(of, "grad." + g_.tensor(of).name, TensorKind::Gradient);
  g_.tensor(g).grad_of = of;
  return g;
}

OpId Synthesizer::emit(const Op& fwd, OpKind kind, const std::string& suffix, std::vector<TensorId> in, std::vector<TensorId> out,
          double flops, TensorId workspace, Phase phase) {
  Op o;
  o.name = fwd.name + suffix;
  o.kind = kind;
  o.phase = phase;
  for (TensorId t : in) o.bytes_read += g_.tensor(t).bytes;
  for (TensorId t : out) o.bytes_written += g_.tensor(t).bytes;
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.flops = flops;
  o.workspace = workspace;
  o.attrs = fwd.attrs;
  o.other = fwd.other;
  o.forward_op = phase == Phase::Backward ? fwd.id : -1;
  return g_.add_op(std::move(o));
}

// Takes the gradient of tensor t's current version (reverse order: the latest unprocessed write).
TensorId Synthesizer::take_grad(TensorId t) {
  TensorId g = grad_[static_cast<size_t>(t)];
  if (g != kNoTensor) --holders_[static_cast<size_t>(g)];
  grad_[static_cast<size_t>(t)] = kNoTensor;
  return g;
}

void Synthesizer::contribute(const Op& fwd, TensorId t, TensorId g) {
  if (g == kNoTensor) return;
  if (const auto s = slice_grad_.find(g); s != slice_grad_.end()) return contribute_slice(fwd, s->second, g);
  TensorId old = grad_[static_cast<size_t>(t)];
  if (old == kNoTensor) {
    grad_[static_cast<size_t>(t)] = g;
    ++holders_[static_cast<size_t>(g)];
    return;
  }
  double n = static_cast<double>(numel(g_.tensor(t).shape));
  if (holders_[static_cast<size_t>(old)] == 1) {  // old.add_(g)
    emit(fwd, OpKind::GradAccumulate, ".grad_acc", {old, g}, {old}, n);
  } else if (holders_[static_cast<size_t>(g)] == 0) {  // g.add_(old)
    emit(fwd, OpKind::GradAccumulate, ".grad_acc", {g, old}, {g}, n);
    --holders_[static_cast<size_t>(old)];
    grad_[static_cast<size_t>(t)] = g;
    ++holders_[static_cast<size_t>(g)];
  } else {  // both shared: old + g
    TensorId s = new_grad(t);
    emit(fwd, OpKind::GradAccumulate, ".grad_acc", {old, g}, {s}, n);
    --holders_[static_cast<size_t>(old)];
    grad_[static_cast<size_t>(t)] = s;
    ++holders_[static_cast<size_t>(s)];
  }
}

// A gradient for input i of `o` when it needs one, else kNoTensor; of the slice's shape when i reads a split's slice.
TensorId Synthesizer::grad_for(const Op& o, size_t i) {
  if (i >= o.inputs.size() || !rg(o.inputs[i])) return kNoTensor;
  const auto s = slice_reads_.find({o.id, i});
  return s == slice_reads_.end() ? new_grad(o.inputs[i]) : slice_grad(s->second);
}

}  // namespace dlsim::workloads_internal

namespace dlsim {

Graph make_training_graph(const Graph& forward, const TrainingOptions& opts) {
  return apply_memory_format(workloads_internal::Synthesizer(forward, opts).run(), opts.memory_format);
}

}  // namespace dlsim
