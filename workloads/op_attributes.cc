// The declaration of every op attribute: its spelling and meaning (kAttributes), and which attributes each op kind
// and Other sub-kind may carry, with their defaults (kinds()). The builders (model_builder_*.cc, cnn_cifar.cc), the
// training synthesis (training*.cc) and the memory-format pass set exactly these; workloads/op_attributes_test.cc
// checks both ways over every zoo model.
#include "workloads/op_attributes.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace dlsim {
namespace {

struct AttrInfo {
  Attr attr;
  const char* name;
  bool list;
  const char* meaning;
};

// In the enum's order (op_attributes_test.cc checks it).
const AttrInfo kAttributes[] = {
    {Attr::adamw, "adamw", false, "AdamW's decoupled weight decay: the Adam step also decays the parameter"},
    {Attr::algorithm, "algorithm", false, "a collective's NCCL algorithm: 0 ring, 1 tree, 2 auto (the faster)"},
    {Attr::amp_scale_loss, "amp_scale_loss", false, "GradScaler's loss scaling: this Mul scales the loss"},
    {Attr::autograd_clone, "autograd_clone", false, "the clone autograd saves of an in-place ReLU6's input"},
    {Attr::axis, "axis", false, "the axis it works along (softmax, concat, select), non-negative"},
    {Attr::batch, "batch", false, "a batched matmul's broadcast batch count; FlashAttention's batch size"},
    {Attr::bias, "bias", false, "whether the layer adds a bias (an input of its own)"},
    {Attr::blocks, "blocks", false, "a stand-in kernel's grid in thread blocks (0: one wave over its SM share)"},
    {Attr::blocks_per_sm, "blocks_per_sm", false, "a stand-in kernel's thread blocks resident on one SM"},
    {Attr::cast, "cast", false, "a dtype cast: autocast's, or a gradient cast to its operand's dtype"},
    {Attr::causal, "causal", false, "causal masking: the kernel skips the upper triangle"},
    {Attr::ceil_mode, "ceil_mode", false, "PyTorch's ceil_mode: the output size rounds up"},
    {Attr::channels, "channels", false, "the channels normalised"},
    {Attr::channels_last, "channels_last", false, "the convolution runs on NHWC tensors (memory_format: nhwc)"},
    {Attr::chunk_bytes, "chunk_bytes", false,
     "multi-tensor launches charged to the op: the sum of each one's largest chunk's bytes (multi_tensor_apply.h)"},
    {Attr::classes, "classes", false, "classes per row of the logits"},
    {Attr::comm_stream, "comm_stream", false,
     "a collective's communication stream tag: collectives of one tag share a stream of their own"},
    {Attr::count_include_pad, "count_include_pad", false, "the average counts the padding"},
    {Attr::dilation, "dilation", false, "the kernel's dilation, both axes"},
    {Attr::dim, "dim", false, "the embedding's width"},
    {Attr::exponent, "exponent", false, "pow's Python-scalar exponent"},
    {Attr::foreach, "foreach", false,
     "eager Adam's update as torch.optim's foreach passes (12 reads, 8 writes for AdamW), not one fused kernel"},
    {Attr::foreach_bytes, "foreach_bytes", false,
     "the bytes the op's multi-tensor kernels move: its share of the foreach passes' traffic (0: none)"},
    {Attr::fused_bias, "fused_bias", false,
     "GELU adds the preceding linear layer's bias (bias_gelu); its backward also writes the bias gradient"},
    {Attr::fused_mask_dropout, "fused_mask_dropout", false,
     "softmax fused with the scale, the mask and dropout: [x, mask, scale] -> [y, dropout mask, probabilities]"},
    {Attr::fused_relu, "fused_relu", false, "batch norm fused with the ReLU after it: its output is relu(y)"},
    {Attr::grad_all_reduce, "grad_all_reduce", false,
     "Megatron's f (tensor parallel): an identity view whose input's gradient is all-reduced over this many ranks"},
    {Attr::groups, "groups", false, "the convolution's groups"},
    {Attr::has_x_fp32, "has_x_fp32", false, "RMSNorm keeps an fp32 copy of its 16-bit input (its output 1)"},
    {Attr::head_dim, "head_dim", false, "the width of one attention head"},
    {Attr::heads, "heads", false, "attention heads"},
    {Attr::in_channels, "in_channels", false, "input channels"},
    {Attr::in_features, "in_features", false, "input features"},
    {Attr::index, "index", false, "the index select takes along its axis, non-negative"},
    {Attr::inplace, "inplace", false, "the op writes its output over its (first) input"},
    {Attr::k, "k", false, "a matrix product's reduced dimension"},
    {Attr::kernel, "kernel", false, "a pooling window's side"},
    {Attr::kernel_h, "kernel_h", false, "the convolution kernel's height"},
    {Attr::kernel_w, "kernel_w", false, "the convolution kernel's width"},
    {Attr::launches, "launches", false,
     "multi-tensor kernel launches charged to the op: those its tensor closes (workloads/multi_tensor_apply.h)"},
    {Attr::layout_transpose, "layout_transpose", false,
     "a transpose of a 16-bit NCHW convolution's operand to or from NHWC (workloads/memory_format.h)"},
    {Attr::lrn_size, "lrn_size", false, "LRN's window, in channels"},
    {Attr::m, "m", false, "rows of a matrix product's result"},
    {Attr::macs, "macs", false, "multiply-accumulates the forward op performs"},
    {Attr::message_bytes, "message_bytes", false,
     "a collective's buffer as nccl-tests counts it: all-reduce's, or the whole gathered array"},
    {Attr::multi_tensor, "multi_tensor", false, "one optimizer step over every parameter (apex's multi_tensor_apply)"},
    {Attr::n, "n", false, "columns of a matrix product's result"},
    {Attr::n_rep, "n_rep", false, "how many times repeat_kv repeats each K/V head"},
    {Attr::normalized, "normalized", false, "the width normalised (the last axis)"},
    {Attr::ns, "ns", false, "a stand-in kernel's duration alone, ns"},
    {Attr::out_channels, "out_channels", false, "output channels"},
    {Attr::out_features, "out_features", false, "output features"},
    {Attr::out_h, "out_h", false, "an adaptive pool's output height"},
    {Attr::out_w, "out_w", false, "an adaptive pool's output width"},
    {Attr::p_ppm, "p_ppm", false, "the dropout probability, parts per million"},
    {Attr::pad, "pad", false, "a pooling window's zero padding on every side"},
    {Attr::pad_begin, "pad_begin", true, "zero padding before each axis (negative: a crop)"},
    {Attr::pad_end, "pad_end", true, "zero padding after each axis (negative: a crop)"},
    {Attr::pad_h, "pad_h", false, "the convolution's zero padding, top and bottom"},
    {Attr::pad_w, "pad_w", false, "the convolution's zero padding, left and right"},
    {Attr::perm, "perm", true, "the permutation: output axis i is input axis perm_i"},
    {Attr::ranks, "ranks", false, "the ranks (GPUs) a collective runs over, at least 2"},
    {Attr::ranks_per_node, "ranks_per_node", false,
     "a collective's ranks on one node (0: as many as fit, up to the node's GPUs); on a grad_all_reduce view, "
     "its gradient all-reduce's"},
    {Attr::rows, "rows", false, "rows: a linear layer's input rows, a loss's rows of logits"},
    {Attr::seq, "seq", false, "the sequence length"},
    {Attr::seq_major, "seq_major", false, "repeat_kv's input is (B, S, kv, d), V's transposed view"},
    {Attr::sm_permille, "sm_permille", false, "a stand-in kernel's share of the SMs, per mille"},
    {Attr::stride, "stride", false, "a pooling window's stride"},
    {Attr::stride_h, "stride_h", false, "the convolution's vertical stride"},
    {Attr::stride_w, "stride_w", false, "the convolution's horizontal stride"},
    {Attr::tf32, "tf32", false, "whether an fp32 convolution or matrix product may use TF32 tensor cores"},
    {Attr::transpose_b, "transpose_b", false, "b is given as (..., N, K) and read transposed"},
    {Attr::view, "view", false, "a view: no data moves (training graphs elide it)"},
    {Attr::vocab, "vocab", false, "the embedding's rows"},
};
static_assert(std::size(kAttributes) == kAttrCount, "one entry per Attr");

struct KindRef {
  KindRef(OpKind kind, OtherOp other = OtherOp::None) : kind(kind), other(other) {}
  OpKind kind;
  OtherOp other;
};

// A kind's own attributes, and the kinds whose attributes it carries (a backward kind: its forward kinds').
struct KindAttributes {
  KindAttributes(KindRef of, std::vector<AttrDecl> own, std::vector<KindRef> carries = {})
      : of(of), own(std::move(own)), carries(std::move(carries)) {}
  KindRef of;
  std::vector<AttrDecl> own;
  std::vector<KindRef> carries;
};

// What a forward graph holds (the builders' and the ONNX importer's kinds): the attributes a gradient accumulation
// may carry, as it carries those of the forward op whose input gradients it sums.
const std::vector<KindRef>& forward_kinds() {
  static const std::vector<KindRef> kinds = {
      {OpKind::Conv2d}, {OpKind::BatchNorm}, {OpKind::Relu}, {OpKind::Relu6}, {OpKind::MaxPool}, {OpKind::AvgPool},
      {OpKind::GlobalAvgPool}, {OpKind::AdaptiveAvgPool}, {OpKind::Linear}, {OpKind::MatMul}, {OpKind::Add},
      {OpKind::Mul}, {OpKind::Concat}, {OpKind::Flatten}, {OpKind::Reshape}, {OpKind::Transpose}, {OpKind::Dropout},
      {OpKind::Pad}, {OpKind::Softmax}, {OpKind::LayerNorm}, {OpKind::Gelu}, {OpKind::Embedding},
      {OpKind::CrossEntropyLoss}, {OpKind::RmsNorm}, {OpKind::Rotary}, {OpKind::RepeatKv}, {OpKind::Silu},
      {OpKind::FlashAttention}, {OpKind::Copy}, {OpKind::Other, OtherOp::Select}, {OpKind::Other, OtherOp::Tanh},
      {OpKind::Other, OtherOp::Lrn}, {OpKind::Other, OtherOp::RotaryEmbedding}, {OpKind::Other, OtherOp::Pow},
      {OpKind::Other, OtherOp::Mean}, {OpKind::Other, OtherOp::Rsqrt}, {OpKind::Other, OtherOp::NegHalf},
      {OpKind::Other, OtherOp::CatHalves}, {OpKind::Other, OtherOp::Split},
  };
  return kinds;
}

// {attr}: no default (the builder always sets it); {attr, v}: v when unset. Flags default to 0 (unset: off).
const std::vector<KindAttributes>& kinds() {
  static const std::vector<KindAttributes> table = {
      // forward (ModelBuilder, model_builder_*.cc)
      {{OpKind::Conv2d},
       {{Attr::kernel_h}, {Attr::kernel_w}, {Attr::stride_h}, {Attr::stride_w}, {Attr::pad_h}, {Attr::pad_w},
        {Attr::dilation, 1}, {Attr::groups}, {Attr::bias}, {Attr::in_channels}, {Attr::out_channels}, {Attr::macs},
        // PyTorch's default allows TF32 for convolutions; the builder sets tf32=0 only when it is off, and the
        // memory-format pass channels_last=1 under NHWC
        {Attr::tf32, 1}, {Attr::channels_last, 0}}},
      {{OpKind::BatchNorm}, {{Attr::channels}, {Attr::fused_relu, 0}}},
      {{OpKind::Relu}, {{Attr::inplace}}},
      {{OpKind::Relu6}, {{Attr::inplace}}},
      {{OpKind::MaxPool}, {{Attr::kernel}, {Attr::stride}, {Attr::pad}, {Attr::ceil_mode, 0}}},
      {{OpKind::AvgPool},
       {{Attr::kernel}, {Attr::stride}, {Attr::pad}, {Attr::ceil_mode, 0}, {Attr::count_include_pad, 1}}},
      {{OpKind::GlobalAvgPool}, {{Attr::out_h}, {Attr::out_w}}},
      {{OpKind::AdaptiveAvgPool}, {{Attr::out_h}, {Attr::out_w}}},
      // TF32 for matrix products is off by default (torch.backends.cuda.matmul.allow_tf32); tf32=1 turns it on
      {{OpKind::Linear},
       {{Attr::in_features}, {Attr::out_features}, {Attr::rows}, {Attr::bias}, {Attr::macs}, {Attr::tf32, 0}}},
      {{OpKind::MatMul},
       {{Attr::batch}, {Attr::m}, {Attr::k}, {Attr::n}, {Attr::macs}, {Attr::transpose_b, 0}, {Attr::tf32, 0}}},
      {{OpKind::Add}, {{Attr::inplace}}},
      {{OpKind::Mul}, {{Attr::amp_scale_loss, 0}}},
      {{OpKind::Concat}, {{Attr::axis}}},
      {{OpKind::Flatten}, {{Attr::view}}},
      {{OpKind::Reshape}, {{Attr::view}, {Attr::grad_all_reduce, 0}, {Attr::ranks_per_node, 0}}},
      {{OpKind::Transpose}, {{Attr::perm}, {Attr::layout_transpose, 0}}},  // a backward transpose: the inverse perm
      {{OpKind::Dropout}, {{Attr::p_ppm}}},
      {{OpKind::Pad}, {{Attr::pad_begin}, {Attr::pad_end}}},
      {{OpKind::Softmax}, {{Attr::axis}, {Attr::fused_mask_dropout, 0}, {Attr::p_ppm}}},  // p_ppm: fused only
      {{OpKind::LayerNorm}, {{Attr::normalized}}},
      {{OpKind::Gelu}, {{Attr::fused_bias, 0}}},
      {{OpKind::Embedding}, {{Attr::vocab}, {Attr::dim}}},
      {{OpKind::CrossEntropyLoss}, {{Attr::classes}, {Attr::rows}}},
      {{OpKind::RmsNorm}, {{Attr::normalized}, {Attr::has_x_fp32, 0}}},
      {{OpKind::Rotary}, {}},
      {{OpKind::RepeatKv}, {{Attr::n_rep}, {Attr::seq_major, 0}}},
      {{OpKind::Silu}, {}},
      {{OpKind::FlashAttention},
       {{Attr::batch}, {Attr::heads}, {Attr::seq}, {Attr::head_dim}, {Attr::causal}, {Attr::macs}}},
      // why a Copy runs: autocast's cast (forward and backward), or the clone autograd saves for ReLU6
      {{OpKind::Copy}, {{Attr::cast, 0}, {Attr::autograd_clone, 0}}},
      {{OpKind::Other, OtherOp::Select}, {{Attr::axis}, {Attr::index}}},
      {{OpKind::Other, OtherOp::Tanh}, {}},
      {{OpKind::Other, OtherOp::Pow}, {{Attr::exponent, 3}}},  // 3: gelu_new's cube
      {{OpKind::Other, OtherOp::Mean}, {}},
      {{OpKind::Other, OtherOp::Rsqrt}, {}},
      {{OpKind::Other, OtherOp::NegHalf}, {}},    // its backward: NegBackward0's neg, the same sub-kind
      {{OpKind::Other, OtherOp::CatHalves}, {}},
      {{OpKind::Other, OtherOp::Split}, {{Attr::axis}}},  // a view: elided, no backward op of its own
      {{OpKind::Other, OtherOp::Lrn}, {{Attr::lrn_size}}},
      {{OpKind::Other, OtherOp::RotaryEmbedding}, {{Attr::head_dim}}},
      // an Other op of no sub-kind carries nothing (a backend refuses it)
      {{OpKind::Other, OtherOp::None}, {}},

      // backward (training synthesis, training_backward.cc): each carries its forward op's attributes
      {{OpKind::Conv2dBwdData}, {}, {{OpKind::Conv2d}}},
      {{OpKind::Conv2dBwdFilter}, {}, {{OpKind::Conv2d}}},
      {{OpKind::BatchNormBwd}, {}, {{OpKind::BatchNorm}}},
      {{OpKind::ReluBwd}, {}, {{OpKind::Relu}, {OpKind::Relu6}}},
      {{OpKind::MaxPoolBwd}, {}, {{OpKind::MaxPool}}},
      {{OpKind::AvgPoolBwd}, {}, {{OpKind::AvgPool}, {OpKind::GlobalAvgPool}, {OpKind::AdaptiveAvgPool}}},
      {{OpKind::LinearBwdData}, {}, {{OpKind::Linear}}},
      {{OpKind::LinearBwdWeight}, {}, {{OpKind::Linear}}},
      {{OpKind::MatMulBwd}, {}, {{OpKind::MatMul}}},
      {{OpKind::MulBwd}, {}, {{OpKind::Mul}}},
      {{OpKind::ConcatBwd}, {}, {{OpKind::Concat}}},
      {{OpKind::DropoutBwd}, {}, {{OpKind::Dropout}}},
      {{OpKind::PadBwd}, {}, {{OpKind::Pad}}},
      {{OpKind::SoftmaxBwd}, {}, {{OpKind::Softmax}}},
      {{OpKind::LayerNormBwd}, {}, {{OpKind::LayerNorm}}},
      {{OpKind::GeluBwd}, {}, {{OpKind::Gelu}}},
      {{OpKind::EmbeddingBwd}, {}, {{OpKind::Embedding}}},
      {{OpKind::CrossEntropyLossBwd}, {}, {{OpKind::CrossEntropyLoss}}},
      {{OpKind::RmsNormBwd}, {}, {{OpKind::RmsNorm}}},
      {{OpKind::RotaryBwd}, {}, {{OpKind::Rotary}}},
      {{OpKind::RepeatKvBwd}, {}, {{OpKind::RepeatKv}}},
      {{OpKind::SiluBwd}, {}, {{OpKind::Silu}}},
      {{OpKind::FlashAttentionBwd}, {}, {{OpKind::FlashAttention}}},
      {{OpKind::GradAccumulate}, {}, forward_kinds()},
      // an Add's or Mul's gradient summed to a broadcast operand (the forward op's attributes: its backward)
      {{OpKind::Other, OtherOp::ReduceBroadcast}, {}, {{OpKind::Add}, {OpKind::Mul}}},
      // slice_backward's zeros (the rotary's rotate_half: training_backward.cc), carrying nothing
      {{OpKind::Other, OtherOp::Fill}, {}},

      // the optimizer (training_optimizer.cc)
      {{OpKind::SgdMomentumUpdate},
       {{Attr::chunk_bytes, 0}, {Attr::foreach_bytes, 0}, {Attr::launches, 0}, {Attr::multi_tensor, 0}}},
      // a recorded torch._foreach_* op (workloads/torch_step_kinds.cc): multi_tensor_apply's launches
      {{OpKind::Other, OtherOp::ForeachPass}, {{Attr::chunk_bytes, 0}, {Attr::foreach_bytes, 0}, {Attr::launches, 0}}},
      {{OpKind::AdamUpdate}, {{Attr::adamw, 0}, {Attr::foreach, 0}, {Attr::multi_tensor, 0}}},
      {{OpKind::ZeroGrad}, {}},
      {{OpKind::Other, OtherOp::AmpUnscale}, {}},

      // collectives (hw/collective_op.h): algorithm 2 is auto, ranks_per_node 0 fills nodes, stream tag 0
      {{OpKind::AllReduce},
       {{Attr::message_bytes}, {Attr::ranks}, {Attr::ranks_per_node, 0}, {Attr::algorithm, 2}, {Attr::comm_stream, 0}}},
      {{OpKind::AllGather},
       {{Attr::message_bytes}, {Attr::ranks}, {Attr::ranks_per_node, 0}, {Attr::algorithm, 2}, {Attr::comm_stream, 0}}},
      {{OpKind::ReduceScatter},
       {{Attr::message_bytes}, {Attr::ranks}, {Attr::ranks_per_node, 0}, {Attr::algorithm, 2}, {Attr::comm_stream, 0}}},
      {{OpKind::Broadcast},
       {{Attr::message_bytes}, {Attr::ranks}, {Attr::ranks_per_node, 0}, {Attr::algorithm, 2}, {Attr::comm_stream, 0}}},

      // the simulator's tests (policies/testing/fakes.h): a kernel whose cost the test gives
      {{OpKind::Other, OtherOp::StandIn},
       {{Attr::ns, 1000}, {Attr::sm_permille, 1000}, {Attr::blocks, 0}, {Attr::blocks_per_sm, 1}}},
  };
  return table;
}

constexpr size_t kKindCount = static_cast<size_t>(OpKind::Other) + 1;
constexpr size_t kOtherCount = static_cast<size_t>(kLastOtherOp) + 1;

// The table resolved per (kind, sub-kind): each attribute's declaration, own or carried. Where two carried kinds
// give one attribute different defaults (a gradient accumulation's tf32: a convolution's 1, a linear layer's 0), it
// has none.
struct Resolved {
  bool exists = false;
  std::array<std::optional<AttrDecl>, kAttrCount> decl;
};

const KindAttributes* row(KindRef r) {
  for (const KindAttributes& k : kinds())
    if (k.of.kind == r.kind && k.of.other == r.other) return &k;
  return nullptr;
}

std::vector<Resolved> resolve() {
  std::vector<Resolved> out(kKindCount * kOtherCount);
  for (const KindAttributes& k : kinds()) {
    Resolved& r = out[static_cast<size_t>(k.of.kind) * kOtherCount + static_cast<size_t>(k.of.other)];
    if (r.exists) throw std::logic_error(std::string("op_attributes.cc declares ") + to_string(k.of.kind) + " twice");
    r.exists = true;
    auto declare = [&](const AttrDecl& d) {
      std::optional<AttrDecl>& slot = r.decl[static_cast<size_t>(d.attr)];
      if (!slot) slot = d;
      else if (slot->default_value != d.default_value) slot->default_value.reset();
    };
    for (const AttrDecl& d : k.own) declare(d);
    for (const KindRef& c : k.carries) {
      const KindAttributes* from = row(c);
      if (!from)
        throw std::logic_error(std::string("op_attributes.cc: ") + to_string(k.of.kind) + " carries an undeclared kind");
      for (const AttrDecl& d : from->own) declare(d);
    }
  }
  return out;
}

const Resolved* resolved(OpKind kind, OtherOp other) {
  static const std::vector<Resolved> table = resolve();
  // a gradient accumulation's sub-kind is its forward op's; its declaration is one for all
  if (kind == OpKind::GradAccumulate) other = OtherOp::None;
  const size_t k = static_cast<size_t>(kind), o = static_cast<size_t>(other);
  if (k >= kKindCount || o >= kOtherCount) return nullptr;
  const Resolved& r = table[k * kOtherCount + o];
  return r.exists ? &r : nullptr;
}

}  // namespace

const char* to_string(Attr a) { return kAttributes[static_cast<size_t>(a)].name; }
const char* meaning_of(Attr a) { return kAttributes[static_cast<size_t>(a)].meaning; }
bool is_list(Attr a) { return kAttributes[static_cast<size_t>(a)].list; }
std::string stored_name(Attr a, size_t index) { return to_string(a) + std::to_string(index); }

std::optional<AttrName> attr_named(std::string_view stored) {
  for (const AttrInfo& i : kAttributes) {
    const std::string_view name = i.name;
    if (!i.list) {
      if (stored == name) return AttrName{i.attr, std::nullopt};
      continue;
    }
    // a list element: the name, then a decimal index without leading zeros (perm0, perm12)
    if (stored.size() <= name.size() || stored.substr(0, name.size()) != name) continue;
    const std::string_view digits = stored.substr(name.size());
    if (digits.size() > 3 || (digits.size() > 1 && digits[0] == '0')) continue;
    size_t index = 0;
    bool ok = true;
    for (char c : digits) {
      ok &= c >= '0' && c <= '9';
      index = index * 10 + static_cast<size_t>(c - '0');
    }
    if (ok) return AttrName{i.attr, index};
  }
  return std::nullopt;
}

const AttrDecl* find_declaration(OpKind kind, OtherOp other, Attr a) {
  const Resolved* r = resolved(kind, other);
  if (!r) return nullptr;
  const std::optional<AttrDecl>& d = r->decl[static_cast<size_t>(a)];
  return d ? &*d : nullptr;
}

std::vector<AttrDecl> declared_attributes(OpKind kind, OtherOp other) {
  std::vector<AttrDecl> v;
  if (const Resolved* r = resolved(kind, other))
    for (const std::optional<AttrDecl>& d : r->decl)
      if (d) v.push_back(*d);
  return v;
}

std::vector<AttrDecl> own_attributes(OpKind kind, OtherOp other) {
  const KindAttributes* k = row({kind, kind == OpKind::GradAccumulate ? OtherOp::None : other});
  return k ? k->own : std::vector<AttrDecl>{};
}

bool has_declaration(OpKind kind, OtherOp other) { return resolved(kind, other) != nullptr; }

bool may_carry(OpKind kind, OtherOp other) {
  if (other == OtherOp::None) return true;
  return kind == OpKind::Other || kind == OpKind::GradAccumulate;
}

}  // namespace dlsim
