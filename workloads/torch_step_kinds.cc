// Recorded aten ops -> dlsim's op kinds, with the attributes workloads/op_attributes.cc declares for each, read from
// the op's schema arguments (stride, padding, dim, ...) and its views' shapes. The names are PyTorch's for both the
// CPU and the CUDA kernels (a step recorded on a GPU would call cudnn_convolution, _scaled_dot_product_flash_attention,
// ...), and for 1.13's and 2.x's spellings. An op whose arguments fall outside what a kind models (a 3-D or transposed
// convolution, a non-square pooling window) gets no kind: it is costed by its traffic like any op dlsim does not
// know, rather than priced as something it is not.
#include "workloads/internal/torch_step_kinds.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "workloads/multi_tensor_apply.h"
#include "workloads/shape.h"

namespace dlsim::workloads_internal {

namespace {

using StepAttrs = std::vector<std::pair<Attr, int64_t>>;

std::optional<size_t> step_input_index(const TorchStepOp& op, const std::string& arg) {
  for (size_t i = 0; i < op.inputs.size(); ++i)
    if (op.inputs[i].arg == arg) return i;
  return std::nullopt;
}
const TorchStepView* step_input(const TorchStepOp& op, const std::string& arg) {
  const auto i = step_input_index(op, arg);
  return i ? &op.inputs[*i] : nullptr;
}
std::optional<size_t> step_result_index(const TorchStepOp& op, int64_t result) {
  for (size_t i = 0; i < op.outputs.size(); ++i)
    if (op.outputs[i].result == result) return i;
  return std::nullopt;
}
const TorchStepView* step_output0(const TorchStepOp& op) {
  const auto i = step_result_index(op, 0);
  return i ? &op.outputs[*i] : nullptr;
}
double step_numel(const TorchStepView* v) {
  if (v == nullptr) return 0;
  double n = 1;
  for (int64_t d : v->shape) n *= static_cast<double>(d);
  return n;
}
std::vector<int64_t> step_ints(const TorchStepOp& op, const std::string& name, std::vector<int64_t> fallback) {
  const TorchStepArg* a = op.arg(name);
  return a != nullptr && !a->ints.empty() ? a->ints : fallback;
}
std::optional<double> step_number(const TorchStepOp& op, const std::string& name) {
  const TorchStepArg* a = op.arg(name);
  if (a == nullptr) return std::nullopt;
  if (a->number) return a->number;
  if (a->ints.size() == 1) return static_cast<double>(a->ints[0]);
  return std::nullopt;
}
// Two values (height, width) from a PyTorch int[2] argument, which may hold one value for both.
std::optional<std::pair<int64_t, int64_t>> step_pair(const std::vector<int64_t>& v) {
  if (v.size() == 1) return std::make_pair(v[0], v[0]);
  if (v.size() == 2) return std::make_pair(v[0], v[1]);
  return std::nullopt;
}
// A dimension argument made non-negative for a tensor of `rank` dimensions.
int64_t step_axis(int64_t dim, size_t rank) { return dim < 0 ? dim + static_cast<int64_t>(rank) : dim; }

// A torch._foreach_* op of the optimizer step (torch.optim's foreach passes, zero_grad's _foreach_zero_ aside):
// multi_tensor_apply's launches over its tensor lists (workloads/multi_tensor_apply.h). Its lists: the input
// arguments of the form name[i] (self[3], other[3]), each name once; an op that returns a new list (out of place:
// _foreach_add(grads, params, alpha=wd)) writes one more. Each element of the first list's tensors moves one
// element of every input list read and one written (the self list in place, or the new list): the launches'
// chunk bytes. The pass's traffic (attr foreach_bytes) is the op's bytes, which the loader counts. No pass where
// the lists are not of one floating-point dtype or are deeper than the rule configures.
std::optional<TorchStepPiece> foreach_pass(const TorchStepOp& op) {
  std::vector<std::string> lists;
  std::vector<int64_t> numels;
  std::string dtype;
  for (const TorchStepView& v : op.inputs) {
    const size_t bracket = v.arg.find('[');
    if (bracket == std::string::npos) continue;
    const std::string list = v.arg.substr(0, bracket);
    if (std::find(lists.begin(), lists.end(), list) == lists.end()) lists.push_back(list);
    if (dtype.empty()) dtype = v.dtype;
    if (v.dtype != dtype) return std::nullopt;
    if (list == lists.front()) numels.push_back(static_cast<int64_t>(step_numel(&v)));
  }
  const int64_t element_bytes = dtype == "float32" ? 4 : (dtype == "bfloat16" || dtype == "float16") ? 2 : 0;
  const bool new_list = !op.inplace && !op.outputs.empty();
  const int depth = static_cast<int>(lists.size()) + (new_list ? 1 : 0);
  if (lists.empty() || element_bytes == 0 || depth > kMultiTensorMaxLists) return std::nullopt;
  const int64_t moved = static_cast<int64_t>(lists.size()) + 1;
  int64_t launches = 0, chunk_bytes = 0;
  for (const MultiTensorCharge& c : multi_tensor_charges(numels, depth, moved * element_bytes))
    launches += c.launches, chunk_bytes += c.chunk_bytes;
  TorchStepPiece p;
  p.kind = OpKind::Other;
  p.other = OtherOp::ForeachPass;
  p.attrs = {{Attr::launches, launches}, {Attr::chunk_bytes, chunk_bytes}};
  return p;
}

TorchStepPiece whole(OpKind kind, StepAttrs attrs, double flops) {
  TorchStepPiece p;
  p.kind = kind;
  p.attrs = std::move(attrs);
  p.flops = flops;
  return p;
}

// A 4-D view whose strides are NHWC's (PyTorch's channels_last) and not also NCHW's: more than one channel and
// more than one pixel, the channels innermost.
bool step_channels_last(const TorchStepView& v) {
  if (v.shape.size() != 4 || v.stride.size() != 4) return false;
  const int64_t n = v.shape[0], c = v.shape[1], h = v.shape[2], w = v.shape[3];
  if (c <= 1 || h * w <= 1) return false;
  return v.stride[1] == 1 && (w == 1 || v.stride[3] == c) && (h == 1 || v.stride[2] == w * c) &&
         (n == 1 || v.stride[0] == h * w * c);
}

// convolution / convolution_backward (and cuDNN's, MKL-DNN's spellings): Conv2d, or its two backward kernels.
// channels_last: the input or the filter is strided NHWC, which is when PyTorch runs the convolution in cuDNN's
// NHWC kernels (cudnn_conv_suggest_memory_format), a depthwise one included (hw/fitted/conv_backend.h): ConvNeXt's
// blocks are, through the permutes around their LayerNorm and Linear layers.
std::vector<TorchStepPiece> step_convolution(const TorchStepOp& op, bool backward) {
  const auto xi = step_input_index(op, "input"), wi = step_input_index(op, "weight");
  if (!xi || !wi) return {};
  const TorchStepView &x = op.inputs[*xi], &w = op.inputs[*wi];
  if (x.shape.size() != 4 || w.shape.size() != 4 || step_ints(op, "transposed", {0})[0] != 0) return {};
  const auto stride = step_pair(step_ints(op, "stride", {1})), pad = step_pair(step_ints(op, "padding", {0}));
  const auto dil = step_pair(step_ints(op, "dilation", {1}));
  if (!stride || !pad || !dil || dil->first != dil->second) return {};
  const int64_t groups = step_ints(op, "groups", {1})[0];
  const auto gy_i = backward ? step_input_index(op, "grad_output") : step_result_index(op, 0);
  if (!gy_i) return {};
  const TorchStepView& y = backward ? op.inputs[*gy_i] : op.outputs[*gy_i];
  if (y.shape.size() != 4 || groups < 1) return {};
  const std::optional<int64_t> macs =
      checked_product({x.shape[0], w.shape[0], y.shape[2], y.shape[3], x.shape[1] / groups, w.shape[2], w.shape[3]});
  if (!macs) return {};
  const bool bias = backward ? !step_ints(op, "bias_sizes", {}).empty() : step_input(op, "bias") != nullptr;
  const StepAttrs attrs = {{Attr::kernel_h, w.shape[2]}, {Attr::kernel_w, w.shape[3]}, {Attr::stride_h, stride->first},
                           {Attr::stride_w, stride->second}, {Attr::pad_h, pad->first}, {Attr::pad_w, pad->second},
                           {Attr::dilation, dil->first}, {Attr::groups, groups}, {Attr::bias, bias},
                           {Attr::in_channels, x.shape[1]}, {Attr::out_channels, w.shape[0]}, {Attr::macs, *macs},
                           {Attr::channels_last, step_channels_last(x) || step_channels_last(w) ? 1 : 0}};
  const double flops = 2.0 * static_cast<double>(*macs);
  if (!backward) return {whole(OpKind::Conv2d, attrs, flops)};
  std::vector<TorchStepPiece> out;
  if (const auto gx = step_result_index(op, 0)) {
    TorchStepPiece p = whole(OpKind::Conv2dBwdData, attrs, flops);
    p.all_views = false;
    p.suffix = ".bwd_data";
    p.inputs = {*gy_i, *wi};
    p.outputs = {*gx};
    out.push_back(p);
  }
  TorchStepPiece f = whole(OpKind::Conv2dBwdFilter, attrs, flops);
  f.all_views = false;
  f.suffix = ".bwd_filter";
  f.inputs = {*gy_i, *xi};
  for (int64_t r : {1, 2})
    if (const auto gw = step_result_index(op, r)) f.outputs.push_back(*gw);
  if (!f.outputs.empty()) out.push_back(f);
  return out;
}

// mm, addmm, bmm, baddbmm: MatMul, with its (batch, m, k, n) from the operands' shapes.
std::vector<TorchStepPiece> step_matmul(const TorchStepOp& op, const std::string& a_arg, const std::string& b_arg,
                                        bool batched) {
  const TorchStepView *a = step_input(op, a_arg), *b = step_input(op, b_arg);
  const size_t rank = batched ? 3 : 2;
  if (a == nullptr || b == nullptr || a->shape.size() != rank || b->shape.size() != rank) return {};
  const int64_t batch = batched ? a->shape[0] : 1, m = a->shape[rank - 2], k = a->shape[rank - 1], n = b->shape[rank - 1];
  const std::optional<int64_t> macs = checked_product({batch, m, k, n});
  if (!macs) return {};
  return {whole(OpKind::MatMul, {{Attr::batch, batch}, {Attr::m, m}, {Attr::k, k}, {Attr::n, n}, {Attr::macs, *macs}},
                2.0 * static_cast<double>(*macs))};
}

// scaled_dot_product_attention's fused kernels (flash, memory-efficient, cuDNN; the CPU's flash): FlashAttention.
std::vector<TorchStepPiece> step_attention(const TorchStepOp& op, bool backward) {
  const TorchStepView *q = step_input(op, "query"), *k = step_input(op, "key");
  if (q == nullptr || k == nullptr || q->shape.size() != 4 || k->shape.size() != 4) return {};
  const bool causal = step_ints(op, "is_causal", {0})[0] != 0;
  const std::optional<int64_t> full = checked_product({2, q->shape[0], q->shape[1], q->shape[2], k->shape[2], q->shape[3]});
  if (!full) return {};
  const int64_t macs = causal ? *full / 2 : *full;  // the causal mask skips the upper triangle's blocks
  const StepAttrs attrs = {{Attr::batch, q->shape[0]}, {Attr::heads, q->shape[1]}, {Attr::seq, q->shape[2]},
                           {Attr::head_dim, q->shape[3]}, {Attr::causal, causal}, {Attr::macs, macs}};
  const double flops = 2.0 * static_cast<double>(macs);
  return {whole(backward ? OpKind::FlashAttentionBwd : OpKind::FlashAttention, attrs, backward ? 2.5 * flops : flops)};
}

// max_pool2d_with_indices (and its backward): MaxPool with a square window, stride and padding, no dilation.
std::vector<TorchStepPiece> step_pool(const TorchStepOp& op, OpKind kind) {
  const auto kernel = step_pair(step_ints(op, "kernel_size", {}));
  if (!kernel || kernel->first != kernel->second) return {};
  const auto stride = step_pair(step_ints(op, "stride", {kernel->first}));
  const auto pad = step_pair(step_ints(op, "padding", {0}));
  const auto dil = step_pair(step_ints(op, "dilation", {1}));
  if (!stride || !pad || !dil || stride->first != stride->second || pad->first != pad->second || dil->first != 1 ||
      dil->second != 1)
    return {};
  StepAttrs attrs = {{Attr::kernel, kernel->first}, {Attr::stride, stride->first}, {Attr::pad, pad->first},
                     {Attr::ceil_mode, step_ints(op, "ceil_mode", {0})[0]}};
  if (kind == OpKind::AvgPool || kind == OpKind::AvgPoolBwd)
    attrs.push_back({Attr::count_include_pad, step_ints(op, "count_include_pad", {1})[0]});
  const TorchStepView* x = step_input(op, "self");
  return {whole(kind, attrs, step_numel(x) * static_cast<double>(kernel->first * kernel->first))};
}

// What a 4-D mean over the two spatial axes is (a global average pool), else nothing.
std::vector<TorchStepPiece> step_mean(const TorchStepOp& op) {
  const TorchStepView* x = step_input(op, "self");
  if (x == nullptr || x->shape.size() != 4) return {};
  std::vector<int64_t> dims = step_ints(op, "dim", {});
  for (int64_t& d : dims) d = step_axis(d, 4);
  std::sort(dims.begin(), dims.end());
  if (dims != std::vector<int64_t>{2, 3}) return {};
  return {whole(OpKind::GlobalAvgPool, {{Attr::out_h, 1}, {Attr::out_w, 1}}, step_numel(x))};
}

std::vector<TorchStepPiece> step_adaptive_pool(const TorchStepOp& op, bool backward) {
  const TorchStepView* out = backward ? step_input(op, "grad_output") : step_output0(op);
  if (out == nullptr || out->shape.size() != 4) return {};
  const StepAttrs attrs = {{Attr::out_h, out->shape[2]}, {Attr::out_w, out->shape[3]}};
  return {whole(backward ? OpKind::AvgPoolBwd : OpKind::AdaptiveAvgPool, attrs, step_numel(step_input(op, "self")))};
}

// The rank of the first view of `arg` (the shape a dim argument counts in), 0 when there is none.
size_t step_rank(const TorchStepOp& op, const std::string& arg) {
  for (const TorchStepView& v : op.inputs)
    if (v.arg == arg || v.arg.rfind(arg + "[", 0) == 0) return v.shape.size();
  return 0;
}

std::vector<TorchStepPiece> step_by_name(const TorchStepOp& op, Phase phase) {
  const std::string& n = op.name;
  const double out = step_numel(step_output0(op)), in = step_numel(op.inputs.empty() ? nullptr : &op.inputs[0]);
  const double elems = std::max(out, in);
  static const std::set<std::string> kConv = {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
                                              "aten::mkldnn_convolution", "aten::_slow_conv2d_forward"};
  if (kConv.count(n)) return step_convolution(op, false);
  if (n == "aten::convolution_backward") return step_convolution(op, true);
  if (n == "aten::mm") return step_matmul(op, "self", "mat2", false);
  if (n == "aten::addmm") return step_matmul(op, "mat1", "mat2", false);
  if (n == "aten::bmm") return step_matmul(op, "self", "mat2", true);
  if (n == "aten::baddbmm") return step_matmul(op, "batch1", "batch2", true);
  static const std::set<std::string> kAttention = {
      "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_flash_attention_for_cpu",
      "aten::_scaled_dot_product_efficient_attention", "aten::_scaled_dot_product_cudnn_attention",
      "aten::_flash_attention_forward", "aten::_efficient_attention_forward"};
  if (kAttention.count(n)) return step_attention(op, false);
  if (n.size() > 9 && n.compare(n.size() - 9, 9, "_backward") == 0 && kAttention.count(n.substr(0, n.size() - 9)))
    return step_attention(op, true);
  static const std::set<std::string> kBatchNorm = {"aten::native_batch_norm", "aten::_native_batch_norm_legit",
                                                   "aten::_native_batch_norm_legit_functional", "aten::cudnn_batch_norm",
                                                   "aten::_batch_norm_with_update", "aten::miopen_batch_norm"};
  static const std::set<std::string> kBatchNormBwd = {"aten::native_batch_norm_backward", "aten::cudnn_batch_norm_backward",
                                                      "aten::batch_norm_backward", "aten::miopen_batch_norm_backward"};
  const TorchStepView* x = op.inputs.empty() ? nullptr : &op.inputs[0];
  if (kBatchNorm.count(n) || kBatchNormBwd.count(n)) {
    const TorchStepView* bx = step_input(op, "input");
    if (bx == nullptr || bx->shape.size() < 2) return {};
    return {whole(kBatchNorm.count(n) ? OpKind::BatchNorm : OpKind::BatchNormBwd, {{Attr::channels, bx->shape[1]}},
                  (kBatchNorm.count(n) ? 5.0 : 8.0) * step_numel(bx))};
  }
  if (n == "aten::native_layer_norm" || n == "aten::native_layer_norm_backward") {
    const std::vector<int64_t> normalized = step_ints(op, "normalized_shape", {});
    const std::optional<int64_t> width = checked_numel(normalized);
    if (!width || normalized.empty()) return {};
    return {whole(n == "aten::native_layer_norm" ? OpKind::LayerNorm : OpKind::LayerNormBwd, {{Attr::normalized, *width}},
                  8.0 * elems)};
  }
  if (n == "aten::relu" || n == "aten::relu_") return {whole(OpKind::Relu, {{Attr::inplace, op.inplace}}, elems)};
  if (n == "aten::threshold_backward") return {whole(OpKind::ReluBwd, {{Attr::inplace, 0}}, elems)};
  if (n == "aten::hardtanh" || n == "aten::hardtanh_") {
    if (step_number(op, "min_val").value_or(-1) != 0 || step_number(op, "max_val").value_or(1) != 6) return {};
    return {whole(OpKind::Relu6, {{Attr::inplace, op.inplace}}, 2 * elems)};
  }
  if (n == "aten::hardtanh_backward") return {whole(OpKind::ReluBwd, {{Attr::inplace, 0}}, elems)};
  if (n == "aten::max_pool2d_with_indices") return step_pool(op, OpKind::MaxPool);
  if (n == "aten::max_pool2d_with_indices_backward") return step_pool(op, OpKind::MaxPoolBwd);
  if (n == "aten::avg_pool2d") return step_pool(op, OpKind::AvgPool);
  if (n == "aten::avg_pool2d_backward") return step_pool(op, OpKind::AvgPoolBwd);
  if (n == "aten::_adaptive_avg_pool2d" || n == "aten::adaptive_avg_pool2d") return step_adaptive_pool(op, false);
  if (n == "aten::_adaptive_avg_pool2d_backward") return step_adaptive_pool(op, true);
  if (n == "aten::mean") return step_mean(op);
  if (n == "aten::add" || n == "aten::add_") return {whole(OpKind::Add, {{Attr::inplace, op.inplace}}, elems)};
  if (n == "aten::mul" || n == "aten::mul_") return {whole(OpKind::Mul, {}, elems)};
  if (n == "aten::cat") {
    const size_t rank = step_rank(op, "tensors");
    if (rank == 0) return {};
    return {whole(OpKind::Concat, {{Attr::axis, step_axis(step_ints(op, "dim", {0})[0], rank)}}, 0)};
  }
  if (n == "aten::native_dropout") {
    const double p = step_number(op, "p").value_or(0);
    return {whole(OpKind::Dropout, {{Attr::p_ppm, static_cast<int64_t>(std::llround(p * 1e6))}}, 2 * elems)};
  }
  if (n == "aten::native_dropout_backward") {
    const double scale = step_number(op, "scale").value_or(1);
    const int64_t ppm = scale > 0 ? static_cast<int64_t>(std::llround((1 - 1 / scale) * 1e6)) : 0;
    return {whole(OpKind::DropoutBwd, {{Attr::p_ppm, ppm}}, 2 * elems)};
  }
  if (n == "aten::_softmax" || n == "aten::_log_softmax" || n == "aten::_softmax_backward_data" ||
      n == "aten::_log_softmax_backward_data") {
    const size_t rank = x != nullptr ? x->shape.size() : 0;
    if (rank == 0) return {};
    const bool fwd = n == "aten::_softmax" || n == "aten::_log_softmax";
    return {whole(fwd ? OpKind::Softmax : OpKind::SoftmaxBwd, {{Attr::axis, step_axis(step_ints(op, "dim", {-1})[0], rank)}},
                  5 * elems)};
  }
  if (n == "aten::gelu" || n == "aten::gelu_") return {whole(OpKind::Gelu, {}, 8 * elems)};
  if (n == "aten::gelu_backward") return {whole(OpKind::GeluBwd, {}, 12 * elems)};
  if (n == "aten::silu" || n == "aten::silu_") return {whole(OpKind::Silu, {}, 4 * elems)};
  if (n == "aten::silu_backward") return {whole(OpKind::SiluBwd, {}, 8 * elems)};
  if (n == "aten::embedding") {
    const TorchStepView* w = step_input(op, "weight");
    if (w == nullptr || w->shape.size() != 2) return {};
    return {whole(OpKind::Embedding, {{Attr::vocab, w->shape[0]}, {Attr::dim, w->shape[1]}}, 0)};
  }
  if (n == "aten::embedding_dense_backward") {
    const TorchStepView* gy = step_input(op, "grad_output");
    const int64_t vocab = step_ints(op, "num_weights", {0})[0];
    if (gy == nullptr || gy->shape.empty() || vocab <= 0) return {};
    return {whole(OpKind::EmbeddingBwd, {{Attr::vocab, vocab}, {Attr::dim, gy->shape.back()}}, elems)};
  }
  if (n == "aten::_to_copy" || n == "aten::clone" || n == "aten::copy_") {
    const TorchStepView* y = step_output0(op);
    const bool cast = x != nullptr && y != nullptr && x->dtype != y->dtype;
    return {whole(OpKind::Copy, {{Attr::cast, cast}}, 0)};
  }
  if (phase == Phase::Optimizer && (n == "aten::zero_" || n == "aten::_foreach_zero_"))
    return {whole(OpKind::ZeroGrad, {}, 0)};
  if (phase == Phase::Optimizer && n.rfind("aten::_foreach_", 0) == 0)
    if (auto p = foreach_pass(op)) return {*p};
  return {};
}

}  // namespace

std::vector<TorchStepPiece> torch_step_pieces(const TorchStepOp& op, Phase phase) { return step_by_name(op, phase); }

bool torch_step_allocates_only(const std::string& aten_name) {
  static const std::set<std::string> kAllocating = {"aten::empty", "aten::empty_like", "aten::empty_strided",
                                                    "aten::new_empty", "aten::new_empty_strided",
                                                    "aten::empty_permuted", "aten::empty.memory_format"};
  return kAllocating.count(aten_name) > 0;
}

}  // namespace dlsim::workloads_internal
