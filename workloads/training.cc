// Training-graph synthesis: forward ops (copied), backward ops in reverse order, one optimizer op per
// parameter. What each backward op reads is what PyTorch 1.13's autograd saves for its forward op
// (derivatives.yaml), so "activations read by a backward op" is the saved-for-backward set:
//   conv, linear: input (and weight)        batch norm: input, weight and the per-channel save_mean/invstd
//   relu: output    relu6: input (a clone, in place)    max-pool: input and int64 indices     avg-pool: input
//   1x1 adaptive pool (a mean; MeanBackward1 saves self): input    dropout: mask       add, concat, pad, reshape: nothing
//   softmax: output    layer norm: input, weight, bias, mean, rstd    gelu: input    matmul: both operands
//   embedding: indices    cross-entropy: log-probabilities and labels    autocast cast: nothing
//   RMS norm: fp32 input, x^2, rstd, normalised input, weight    rotary: cos and sin    repeat_kv: nothing
//   silu: input    FlashAttention: q, k, v, output and log-sum-exp (docs/models.md)
// Deliberate differences from PyTorch, all small:
//   - Views (flatten, reshape) are elided: the consumer reads the viewed tensor, as the storage is shared.
//   - The backward of concat writes each input's gradient as a tensor of its own (PyTorch returns narrow
//     views of the output gradient, keeping it alive instead); the bytes are the same.
//   - Dropout's mask is bool, as CUDA's fused dropout keeps; PyTorch on the CPU keeps a float mask.
//   - Weight gradients follow zero_grad(set_to_none=True), PyTorch's default: a weight's gradient is
//     allocated by the backward op that first produces it and is last used (so freed) by the optimizer step.
//     Momentum and Adam state are persistent. The first step's momentum clone is not modelled (steady state).
// Gradients meeting at a tensor used by several ops are summed as autograd's InputBuffer does: in place into
// whichever of the two gradients no other tensor shares, else into a new tensor.
#include "workloads/training.h"


#include "common/config_error.h"
#include "workloads/memory_format.h"

namespace dlsim {
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

class Synthesizer {
 public:
  Synthesizer(const Graph& f, const TrainingOptions& opts) : f_(f), opts_(opts) {
    g_.name = f.name;
    g_.batch = f.batch;
    g_.blocks = f.blocks;  // copied forward ops keep their Op::block
  }

  Graph run() {
    check_precision();
    copy_forward();
    scale_loss();
    mark_requires_grad();
    for (size_t i = fwd_ops_.size(); i-- > 0;) backward_of(g_.op(fwd_ops_[i]));
    optimizer();
    return std::move(g_);
  }

 private:
  const Graph& f_;
  const TrainingOptions& opts_;
  Graph g_;
  std::vector<TensorId> tmap_;  // forward tensor -> training tensor
  std::vector<OpId> fwd_ops_;   // the copied forward ops
  std::vector<char> learnable_, requires_grad_;
  std::vector<TensorId> grad_;  // training tensor -> its gradient so far (kNoTensor: none yet)
  std::vector<int> holders_;    // gradient tensor -> how many tensors currently hold it as their gradient

  [[noreturn]] void fail(const std::string& key, const std::string& msg) const { throw ConfigError(f_.name, 0, key, msg); }

  // The forward graph must have been built for the precision asked for (ModelBuilder's BuildOptions).
  void check_precision() const {
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

  // torch.cuda.amp.GradScaler's scaler.scale(loss): the loss times the scale (a one-element kernel) before the
  // backward pass. Its gradient is the seed the loss's backward starts from, so nothing else changes.
  void scale_loss() {
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
    o.attrs.set("amp_scale_loss", 1);
    g_.add_op(std::move(o));
  }

  TensorId add(Tensor t) {
    TensorId id = g_.add_tensor(std::move(t));
    learnable_.push_back(0);
    requires_grad_.push_back(0);
    grad_.push_back(kNoTensor);
    holders_.push_back(0);
    return id;
  }

  TensorId map(TensorId ft) {
    if (ft < 0 || static_cast<size_t>(ft) >= f_.tensors().size()) fail("tensor", "op refers to tensor " + std::to_string(ft) + " which does not exist");
    if (tmap_[static_cast<size_t>(ft)] == kNoTensor) tmap_[static_cast<size_t>(ft)] = add(f_.tensor(ft));
    return tmap_[static_cast<size_t>(ft)];
  }

  TensorId workspace_for(const Op& o, const std::string& name) {
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

  void copy_forward() {
    tmap_.assign(f_.tensors().size(), kNoTensor);
    bool has_loss = false;
    for (const Op& fo : f_.ops()) {
      if (fo.phase != Phase::Forward) fail(fo.name, "the forward graph holds a non-forward op");
      if (is_view(fo.kind)) {  // elided: the view's readers read the viewed tensor
        if (fo.inputs.size() != 1 || fo.outputs.size() != 1) fail(fo.name, "a view has one input and one output");
        tmap_.at(static_cast<size_t>(fo.outputs[0])) = map(fo.inputs[0]);
        continue;
      }
      if (fo.outputs.empty()) fail(fo.name, "op has no output");
      has_loss |= fo.kind == OpKind::CrossEntropyLoss;
      Op o = fo;
      for (TensorId& t : o.inputs) t = map(t);
      for (TensorId& t : o.outputs) t = map(t);
      if (o.kind == OpKind::Conv2d) o.workspace = workspace_for(o, o.name);
      fwd_ops_.push_back(g_.add_op(std::move(o)));
    }
    if (!has_loss) fail("loss", "the forward graph has no loss op; end it with ModelBuilder::cross_entropy_loss");
  }

  void mark_requires_grad() {
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

  bool rg(TensorId t) const { return requires_grad_[static_cast<size_t>(t)] != 0; }

  TensorId new_grad(TensorId of) {
    const Tensor& src = g_.tensor(of);
    Tensor t;
    t.name = "grad." + src.name;
    t.kind = TensorKind::Gradient;
    t.grad_of = of;
    t.dtype = src.dtype;
    t.shape = src.shape;
    t.bytes = src.bytes;
    return add(std::move(t));
  }

  OpId emit(const Op& fwd, OpKind kind, const std::string& suffix, std::vector<TensorId> in, std::vector<TensorId> out,
            double flops, TensorId workspace = kNoTensor, Phase phase = Phase::Backward) {
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
    o.forward_op = phase == Phase::Backward ? fwd.id : -1;
    return g_.add_op(std::move(o));
  }

  // Takes the gradient of tensor t's current version (reverse order: the latest unprocessed write).
  TensorId take_grad(TensorId t) {
    TensorId g = grad_[static_cast<size_t>(t)];
    if (g != kNoTensor) --holders_[static_cast<size_t>(g)];
    grad_[static_cast<size_t>(t)] = kNoTensor;
    return g;
  }

  void contribute(const Op& fwd, TensorId t, TensorId g) {
    if (g == kNoTensor) return;
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

  // A gradient for input i of `o` when it needs one, else kNoTensor.
  TensorId grad_for(const Op& o, size_t i) {
    return (i < o.inputs.size() && rg(o.inputs[i])) ? new_grad(o.inputs[i]) : kNoTensor;
  }

  static void push(std::vector<TensorId>& v, TensorId t) {
    if (t != kNoTensor) v.push_back(t);
  }

  void backward_of(const Op& fwd_ref) {
    const Op fwd = fwd_ref;  // copied: emitting ops reallocates the op vector
    const auto& in = fwd.inputs;
    const double fl = fwd.flops;
    if (fwd.kind == OpKind::CrossEntropyLoss) {  // the seed: d(loss)/d(logits) from the saved log-probs
      TensorId gx = grad_for(fwd, 0);
      if (gx == kNoTensor) return;
      emit(fwd, OpKind::CrossEntropyLossBwd, ".bwd", {fwd.outputs[1], in[1]}, {gx}, 2 * fl / 5);
      contribute(fwd, in[0], gx);
      return;
    }
    TensorId gy = take_grad(fwd.outputs[0]);
    if (gy == kNoTensor) return;  // nothing downstream needs this op's gradient
    double n_out = static_cast<double>(numel(g_.tensor(fwd.outputs[0]).shape));
    switch (fwd.kind) {
      case OpKind::Conv2d: {
        if (TensorId gx = grad_for(fwd, 0); gx != kNoTensor) {
          emit(fwd, OpKind::Conv2dBwdData, ".bwd_data", {gy, in[1]}, {gx}, fl, workspace_for(fwd, fwd.name + ".bwd_data"));
          contribute(fwd, in[0], gx);
        }
        TensorId gw = grad_for(fwd, 1), gb = grad_for(fwd, 2);
        std::vector<TensorId> outs;
        push(outs, gw);
        push(outs, gb);
        if (!outs.empty())
          emit(fwd, OpKind::Conv2dBwdFilter, ".bwd_filter", {gy, in[0]}, outs, fl + (gb != kNoTensor ? n_out : 0),
               workspace_for(fwd, fwd.name + ".bwd_filter"));
        contribute(fwd, in[1], gw);
        if (in.size() > 2) contribute(fwd, in[2], gb);
        break;
      }
      case OpKind::Linear: {
        if (TensorId gx = grad_for(fwd, 0); gx != kNoTensor) {
          emit(fwd, OpKind::LinearBwdData, ".bwd_data", {gy, in[1]}, {gx}, fl);
          contribute(fwd, in[0], gx);
        }
        TensorId gw = grad_for(fwd, 1), gb = grad_for(fwd, 2);
        std::vector<TensorId> outs;
        push(outs, gw);
        push(outs, gb);
        if (!outs.empty()) emit(fwd, OpKind::LinearBwdWeight, ".bwd_weight", {gy, in[0]}, outs, fl + (gb != kNoTensor ? n_out : 0));
        contribute(fwd, in[1], gw);
        if (in.size() > 2) contribute(fwd, in[2], gb);
        break;
      }
      case OpKind::BatchNorm:
      case OpKind::LayerNorm: {
        std::vector<TensorId> ins = {gy, in[0], in[1]};
        if (fwd.kind == OpKind::LayerNorm) ins.push_back(in[2]);
        ins.push_back(fwd.outputs[1]);
        ins.push_back(fwd.outputs[2]);
        if (fwd.attrs.has("fused_relu")) ins.push_back(fwd.outputs[0]);  // the ReLU's mask is its output
        TensorId gx = grad_for(fwd, 0), gg = grad_for(fwd, 1), gbeta = grad_for(fwd, 2);
        std::vector<TensorId> outs;
        push(outs, gx);
        push(outs, gg);
        push(outs, gbeta);
        if (outs.empty()) break;
        emit(fwd, fwd.kind == OpKind::BatchNorm ? OpKind::BatchNormBwd : OpKind::LayerNormBwd, ".bwd", ins, outs,
             (fwd.attrs.has("fused_relu") ? 9 : 8) * n_out);
        contribute(fwd, in[0], gx);
        contribute(fwd, in[1], gg);
        contribute(fwd, in[2], gbeta);
        break;
      }
      case OpKind::Relu:  // threshold_backward(grad, result): the output, in place or not
        unary(fwd, gy, OpKind::ReluBwd, {fwd.outputs[0]}, n_out);
        break;
      case OpKind::Relu6:  // hardtanh_backward(grad, self): the input (its clone when in place)
        unary(fwd, gy, OpKind::ReluBwd, {in.size() > 1 ? in[1] : in[0]}, n_out);
        break;
      case OpKind::MaxPool: unary(fwd, gy, OpKind::MaxPoolBwd, {in[0], fwd.outputs[1]}, n_out); break;
      case OpKind::AvgPool:
      case OpKind::AdaptiveAvgPool:
      case OpKind::GlobalAvgPool: unary(fwd, gy, OpKind::AvgPoolBwd, {in[0]}, fl); break;
      case OpKind::Dropout: unary(fwd, gy, OpKind::DropoutBwd, {fwd.outputs[1]}, n_out); break;
      case OpKind::Pad: unary(fwd, gy, OpKind::PadBwd, {}, 0); break;
      case OpKind::Softmax:
        if (fwd.attrs.has("fused_mask_dropout"))  // dropout's mask and the probabilities; scale and mask: none
          unary(fwd, gy, OpKind::SoftmaxBwd, {fwd.outputs[1], fwd.outputs[2]}, 5 * n_out);
        else
          unary(fwd, gy, OpKind::SoftmaxBwd, {fwd.outputs[0]}, 3 * n_out);
        break;
      case OpKind::Gelu:
        if (fwd.attrs.has("fused_bias")) {  // bias_gelu_back: dx and the bias gradient (a column sum) at once
          TensorId gx = grad_for(fwd, 0), gb = grad_for(fwd, 1);
          std::vector<TensorId> outs;
          push(outs, gx);
          push(outs, gb);
          if (outs.empty()) break;
          emit(fwd, OpKind::GeluBwd, ".bwd", {gy, in[0], in[1]}, outs, fl + n_out);
          contribute(fwd, in[0], gx);
          contribute(fwd, in[1], gb);
        } else {
          unary(fwd, gy, OpKind::GeluBwd, {in[0]}, fl);
        }
        break;
      case OpKind::RmsNorm: {  // the fp32 input, x^2, rstd, the normalised input and the weight (model_builder.cc)
        const size_t first = fwd.attrs.get("has_x_fp32") != 0 ? 2 : 1;  // outputs: y, (x fp32), x^2, rstd, normed
        const TensorId x32 = first == 2 ? fwd.outputs[1] : in[0];
        std::vector<TensorId> ins = {gy, x32, fwd.outputs[first], fwd.outputs[first + 1], fwd.outputs[first + 2], in[1]};
        TensorId gx = grad_for(fwd, 0), gw = grad_for(fwd, 1);
        std::vector<TensorId> outs;
        push(outs, gx);
        push(outs, gw);
        if (outs.empty()) break;
        emit(fwd, OpKind::RmsNormBwd, ".bwd", ins, outs, 8 * n_out);
        contribute(fwd, in[0], gx);
        contribute(fwd, in[1], gw);
        break;
      }
      case OpKind::Rotary: unary(fwd, gy, OpKind::RotaryBwd, {in[1], in[2]}, fl); break;  // cos and sin
      case OpKind::RepeatKv: unary(fwd, gy, OpKind::RepeatKvBwd, {}, n_out); break;     // a sum over the repeats
      case OpKind::Silu: unary(fwd, gy, OpKind::SiluBwd, {in[0]}, fl); break;
      case OpKind::FlashAttention: {  // q, k, v, the output and the log-sum-exp; P recomputed block by block
        std::vector<TensorId> ins = {gy, in[0], in[1], in[2], fwd.outputs[0], fwd.outputs[1]}, outs(3, kNoTensor), real;
        for (size_t i = 0; i < 3; ++i) push(real, outs[i] = grad_for(fwd, i));
        if (real.empty()) break;
        emit(fwd, OpKind::FlashAttentionBwd, ".bwd", ins, real, 2.5 * fl);
        for (size_t i = 0; i < 3; ++i) contribute(fwd, in[i], outs[i]);
        break;
      }
      case OpKind::Copy: unary(fwd, gy, OpKind::Copy, {}, 0); break;
      case OpKind::Transpose: unary(fwd, gy, OpKind::Transpose, {}, 0); break;
      case OpKind::Embedding: {
        TensorId gw = grad_for(fwd, 1);
        if (gw == kNoTensor) break;
        emit(fwd, OpKind::EmbeddingBwd, ".bwd", {gy, in[0]}, {gw}, n_out);
        contribute(fwd, in[1], gw);
        break;
      }
      case OpKind::Add: add_backward(fwd, gy); break;
      case OpKind::Mul:
      case OpKind::MatMul: {
        TensorId ga = grad_for(fwd, 0), gb = grad_for(fwd, 1);
        std::vector<TensorId> ins = {gy}, outs;
        if (ga != kNoTensor) ins.push_back(in[1]);  // d/da needs b, d/db needs a
        if (gb != kNoTensor) ins.push_back(in[0]);
        push(outs, ga);
        push(outs, gb);
        if (outs.empty()) break;
        emit(fwd, fwd.kind == OpKind::Mul ? OpKind::MulBwd : OpKind::MatMulBwd, ".bwd", ins, outs,
             fl * static_cast<double>(outs.size()));
        contribute(fwd, in[0], ga);
        contribute(fwd, in[1], gb);
        break;
      }
      case OpKind::Concat: {
        std::vector<TensorId> outs(in.size(), kNoTensor), real;
        for (size_t i = 0; i < in.size(); ++i) push(real, outs[i] = grad_for(fwd, i));
        if (real.empty()) break;
        emit(fwd, OpKind::ConcatBwd, ".bwd", {gy}, real, 0);
        for (size_t i = 0; i < in.size(); ++i) contribute(fwd, in[i], outs[i]);
        break;
      }
      default: {  // an op without a dedicated rule (e.g. LRN): its backward reads the inputs and the output
        std::vector<TensorId> ins = {gy}, outs(in.size(), kNoTensor), real;
        for (TensorId t : in) ins.push_back(t);
        ins.push_back(fwd.outputs[0]);
        for (size_t i = 0; i < in.size(); ++i) push(real, outs[i] = grad_for(fwd, i));
        if (real.empty()) break;
        emit(fwd, OpKind::Other, ".bwd", ins, real, fl);
        for (size_t i = 0; i < in.size(); ++i) contribute(fwd, in[i], outs[i]);
      }
    }
  }

  // One-input ops: dx from dy and the saved tensors.
  void unary(const Op& fwd, TensorId gy, OpKind kind, std::vector<TensorId> saved, double flops) {
    TensorId gx = grad_for(fwd, 0);
    if (gx == kNoTensor) return;
    std::vector<TensorId> ins = {gy};
    ins.insert(ins.end(), saved.begin(), saved.end());
    OpId b = emit(fwd, kind, ".bwd", ins, {gx}, flops);
    if (kind == OpKind::Transpose) {  // the inverse permutation
      Attrs inv = g_.op(b).attrs;
      for (const auto& [k, v] : fwd.attrs.all())
        if (k.rfind("perm", 0) == 0) inv.set("perm" + std::to_string(v), std::stoll(k.substr(4)));
      g_.op(b).attrs = inv;
    }
    contribute(fwd, fwd.inputs[0], gx);
  }

  // Add passes its gradient through to both operands (the same tensor, as AddBackward0 does); an operand
  // that was broadcast receives the gradient summed down to its shape.
  void add_backward(const Op& fwd, TensorId gy) {
    for (size_t i = 0; i < 2; ++i) {
      TensorId x = fwd.inputs[i];
      if (!rg(x)) continue;
      if (g_.tensor(x).shape == g_.tensor(gy).shape && g_.tensor(x).dtype != g_.tensor(gy).dtype) {
        // A promoting add (autocast's bf16 branch + the fp32 residual): autograd casts the gradient to the
        // operand's dtype (the engine's validate_outputs), so the 16-bit branch's backward runs in 16 bits.
        TensorId gx = new_grad(x);
        Op& o = g_.op(emit(fwd, OpKind::Copy, ".bwd_cast" + std::to_string(i), {gy}, {gx}, 0));
        o.attrs = Attrs();
        o.attrs.set("cast", 1);
        contribute(fwd, x, gx);
      } else if (g_.tensor(x).shape == g_.tensor(gy).shape) {
        contribute(fwd, x, gy);
      } else {
        TensorId gx = new_grad(x);
        Op& o = g_.op(emit(fwd, OpKind::Other, ".bwd_reduce", {gy}, {gx}, static_cast<double>(numel(g_.tensor(gy).shape))));
        o.attrs.set("reduce_broadcast", 1);
        contribute(fwd, x, gx);
      }
    }
  }

  // GradScaler's unscale before the step (_amp_foreach_non_finite_check_and_unscale_): one multi-tensor kernel
  // that multiplies every weight gradient by 1/scale in place and checks it for inf/NaN.
  void unscale_gradients() {
    Op o;
    o.name = "amp.unscale";
    o.kind = OpKind::Other;
    o.phase = Phase::Optimizer;
    for (size_t w = 0; w < learnable_.size(); ++w) {
      const TensorId gw = learnable_[w] ? grad_[w] : kNoTensor;
      if (gw == kNoTensor) continue;
      o.inputs.push_back(gw);
      o.outputs.push_back(gw);
      o.bytes_read += g_.tensor(gw).bytes;
      o.bytes_written += g_.tensor(gw).bytes;
      o.flops += static_cast<double>(numel(g_.tensor(gw).shape));
    }
    if (o.inputs.empty()) return;
    o.attrs.set("amp_unscale", 1);
    g_.add_op(std::move(o));
  }

  void optimizer() {
    if (opts_.precision == Precision::MixedFP16) unscale_gradients();
    // Kernels::Fused: apex's FusedAdam / FusedSGD (multi_tensor_apply): one op updates every parameter, and Adam
    // keeps no per-parameter denominator.
    const bool fused = opts_.kernels == Kernels::Fused;
    Op step;
    step.name = opts_.optimizer == Optimizer::SgdMomentum ? "optimizer.fused_sgd"
                : opts_.optimizer == Optimizer::AdamW     ? "optimizer.fused_adamw"
                                                          : "optimizer.fused_adam";
    const bool adamw = opts_.optimizer == Optimizer::AdamW;
    const double adam_flops = adamw ? 14 : 12;  // AdamW: the decay's multiply (2 per element with the lr product)
    step.kind = opts_.optimizer == Optimizer::SgdMomentum ? OpKind::SgdMomentumUpdate : OpKind::AdamUpdate;
    step.phase = Phase::Optimizer;
    Op none;
    for (size_t w = 0; w < learnable_.size(); ++w) {
      if (!learnable_[w]) continue;
      TensorId gw = grad_[w];
      if (gw == kNoTensor) continue;  // no gradient reached it: the optimizer skips it (p.grad is None)
      const Tensor wt = g_.tensor(static_cast<TensorId>(w));
      double n = static_cast<double>(numel(wt.shape));
      // State in the parameter's dtype (torch.zeros_like(p)): fp32 beside fp32 masters, bf16 for a bf16 model.
      auto state = [&](const std::string& suffix) {
        Tensor t;
        t.name = wt.name + suffix;
        t.kind = TensorKind::OptimizerState;
        t.dtype = wt.dtype;
        t.shape = wt.shape;
        t.bytes = wt.bytes;
        t.persistent = true;
        return add(std::move(t));
      };
      none.name = wt.name;
      TensorId wid = static_cast<TensorId>(w);
      if (fused) {
        std::vector<TensorId> in = {wid, gw}, out = {wid};
        const int n_state = opts_.optimizer == Optimizer::SgdMomentum ? 1 : 2;
        for (int k = 0; k < n_state; ++k) {
          const TensorId st = state(n_state == 1 ? ".momentum_buffer" : (k == 0 ? ".exp_avg" : ".exp_avg_sq"));
          in.push_back(st);
          out.push_back(st);
        }
        for (TensorId t : in) step.inputs.push_back(t), step.bytes_read += g_.tensor(t).bytes;
        for (TensorId t : out) step.outputs.push_back(t), step.bytes_written += g_.tensor(t).bytes;
        step.flops += (n_state == 1 ? 4 : adam_flops) * n;
        continue;
      }
      if (opts_.optimizer == Optimizer::SgdMomentum) {
        // buf.mul_(momentum).add_(grad); p.add_(buf, alpha=-lr)
        TensorId m = state(".momentum_buffer");
        emit(none, OpKind::SgdMomentumUpdate, ".sgd", {wid, gw, m}, {wid, m}, 4 * n, kNoTensor, Phase::Optimizer);
      } else {
        // PyTorch 1.13's single-tensor Adam allocates denom = exp_avg_sq.sqrt() / bc2 + eps per parameter
        // each step: modelled as the op's workspace.
        TensorId m = state(".exp_avg"), v = state(".exp_avg_sq");
        Tensor d;
        d.name = wt.name + ".adam_denom";
        d.kind = TensorKind::Workspace;
        d.dtype = wt.dtype;
        d.shape = wt.shape;
        d.bytes = wt.bytes;
        TensorId denom = add(std::move(d));
        const OpId step_id = emit(none, OpKind::AdamUpdate, adamw ? ".adamw" : ".adam", {wid, gw, m, v}, {wid, m, v},
                                  adam_flops * n, denom, Phase::Optimizer);
        if (adamw) g_.op(step_id).attrs.set("adamw", 1);
      }
    }
    if (fused && !step.inputs.empty()) {
      step.attrs.set("multi_tensor", 1);
      if (adamw) step.attrs.set("adamw", 1);
      g_.add_op(std::move(step));
    }
  }
};

}  // namespace

Graph make_training_graph(const Graph& forward, const TrainingOptions& opts) {
  return apply_memory_format(Synthesizer(forward, opts).run(), opts.memory_format);
}

}  // namespace dlsim
