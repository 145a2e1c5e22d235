#pragma once
// Builds a forward graph layer by layer with PyTorch's shapes and semantics. The zoo's builders and the ONNX
// importer both produce forward graphs through this class; training.h turns a forward graph into a training
// graph (backward + optimizer). Tensors are NCHW for images and (batch, seq, hidden) for sequences.
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "workloads/graph.h"
#include "workloads/training_options.h"

namespace dlsim {

// How layers are built: the numerics, whether fp32 convolutions and matmuls may use TF32, and fused kernels.
struct BuildOptions {
  DType activations = DType::F32;  // F32, or BF16/F16 (16-bit activations)
  DType weights = DType::F32;      // F32 (masters; autocast casts them for each op), or BF16 (a model in bf16)
  Tf32 tf32 = Tf32::Conv;
  bool fused = false;              // Kernels::Fused (workloads/training.h lists the fusions)
};
// The builder's options for a training setup (precision, tf32, kernels).
BuildOptions build_options(const TrainingOptions& t);

class ModelBuilder {
 public:
  // act_dtype: the data type of activations (F32, or BF16/F16 for mixed precision; weights stay F32 masters).
  ModelBuilder(std::string model_name, int64_t batch, DType act_dtype = DType::F32);
  ModelBuilder(std::string model_name, int64_t batch, const BuildOptions& options);

  // Every layer takes an optional name (module path as torchvision spells it, e.g. "layer1.0.conv1").
  TensorId input(const std::vector<int64_t>& shape, DType dtype, const std::string& name = "input");
  TensorId conv2d(TensorId x, int64_t out_channels, int64_t kh, int64_t kw, int64_t stride_h, int64_t stride_w,
                  int64_t pad_h, int64_t pad_w, int64_t groups = 1, bool bias = false,
                  const std::string& name = "", int64_t dilation = 1);
  TensorId conv2d(TensorId x, int64_t out_channels, int64_t k, int64_t stride, int64_t pad, int64_t groups = 1,
                  bool bias = false, const std::string& name = "") {
    return conv2d(x, out_channels, k, k, stride, stride, pad, pad, groups, bias, name);
  }
  TensorId batch_norm(TensorId x, const std::string& name = "");
  TensorId relu(TensorId x, bool inplace = true, const std::string& name = "");
  TensorId relu6(TensorId x, bool inplace = true, const std::string& name = "");
  TensorId max_pool(TensorId x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode = false,
                    const std::string& name = "");
  TensorId avg_pool(TensorId x, int64_t k, int64_t stride, int64_t pad, bool ceil_mode = false,
                    bool count_include_pad = true, const std::string& name = "");
  TensorId adaptive_avg_pool(TensorId x, int64_t out_h, int64_t out_w, const std::string& name = "");
  TensorId flatten(TensorId x, const std::string& name = "");
  TensorId linear(TensorId x, int64_t out_features, bool bias = true, const std::string& name = "");
  TensorId dropout(TensorId x, double p, const std::string& name = "");
  TensorId add(TensorId a, TensorId b, bool inplace = false, const std::string& name = "");
  TensorId mul(TensorId a, TensorId b, const std::string& name = "");
  TensorId concat(const std::vector<TensorId>& xs, int64_t axis, const std::string& name = "");
  // transpose_b: b is given as (..., N, K) and used transposed (torch.matmul(a, b.transpose(-1, -2)), the view
  // PyTorch's bmm reads without a copy); attr transpose_b=1.
  TensorId matmul(TensorId a, TensorId b, const std::string& name = "", bool transpose_b = false);
  TensorId reshape(TensorId x, const std::vector<int64_t>& shape, const std::string& name = "");
  // torch.split(x, size, axis) into `parts` equal slices: views of x's storage (an Other op of sub-kind Split, one
  // output per slice), which the training synthesis elides: a reader reads x, which lives as long as any slice is
  // read, and the slices' gradients are joined by one cat into x's (autograd's SplitWithSizesBackward).
  std::vector<TensorId> split(TensorId x, int64_t parts, int64_t axis, const std::string& name = "");
  TensorId transpose(TensorId x, const std::vector<int64_t>& perm, const std::string& name = "");
  TensorId pad(TensorId x, const std::vector<int64_t>& pads, const std::string& name = "");
  TensorId softmax(TensorId x, int64_t axis, const std::string& name = "");
  // softmax(x, dtype=torch.float32): computed and kept in fp32 whatever x's dtype (x cast up first).
  TensorId softmax_fp32(TensorId x, int64_t axis, const std::string& name = "");
  // x.to(dtype): a Copy op (attr cast=1) when the dtype differs, else x itself.
  TensorId cast(TensorId x, DType to, const std::string& name);
  TensorId layer_norm(TensorId x, const std::string& name = "");
  // The decoder-only LLM layers (workloads/llama_models.h), each one op whose saved tensors are those PyTorch
  // 1.13's autograd keeps for Hugging Face's eager code (docs/models.md lists them):
  // RMSNorm (LlamaRMSNorm) as PyTorch's kernels: (cast), pow, mean, + eps, rsqrt, mul, (cast), weight mul.
  TensorId rms_norm(TensorId x, const std::string& name = "");
  // cos and sin of the rotary embedding, (1, S, head_dim) in the weights' dtype, from the (1, S) position ids
  // (computed under no_grad: no gradient).
  std::pair<TensorId, TensorId> rotary_embedding(TensorId position_ids, int64_t head_dim, const std::string& name);
  // q * cos + rotate_half(q) * sin on the head-split projection x (B, S, heads, d) -> (B, heads, S, d), as
  // PyTorch's kernels: mul, neg, cat, mul, add (kernels: fused: one Rotary op); keeps cos and sin only.
  TensorId rotary(TensorId x, TensorId cos, TensorId sin, const std::string& name = "");
  // repeat_kv: (B, kv, S, d), or (B, S, kv, d) when seq_major (V's transposed view), -> (B, kv * n_rep, S, d),
  // a materialised copy (expand + reshape); with n_rep 1 and seq_major it is the copy torch.matmul makes of the
  // transposed view. Keeps nothing.
  TensorId repeat_kv(TensorId x, int64_t n_rep, bool seq_major, const std::string& name = "");
  TensorId silu(TensorId x, const std::string& name = "");
  // FlashAttention (PyTorch 2's scaled_dot_product_attention on its flash kernel): q, k, v (B, heads, S, d) ->
  // output (B, S, heads, d) (the layout the kernel writes, so HF's transpose(1, 2).contiguous() copies nothing) and
  // the per-row log-sum-exp (B, heads, S) fp32. Keeps q, k, v, the output and the log-sum-exp; no S x S matrix.
  TensorId flash_attention(TensorId q, TensorId k, TensorId v, bool causal, const std::string& name = "");
  TensorId gelu(TensorId x, const std::string& name = "");
  // transformers' gelu_new written out as Hugging Face's GPT-2 runs it (NewGELUActivation): its eight elementwise
  // ops (and, under autocast, the fp32 cast of x pow reads), each its own op; y is fp32 under autocast.
  TensorId gelu_tanh_formula(TensorId x, const std::string& name = "");
  // A linear layer followed by GELU. Eager: Linear with its bias, then Gelu. Fused (NVIDIA's bias_gelu): Linear
  // without bias, then one Gelu kernel that adds the bias (attr fused_bias=1; its backward also writes the
  // bias gradient).
  TensorId linear_gelu(TensorId x, int64_t out_features, const std::string& linear_name, const std::string& gelu_name);
  // Attention's softmax(x * scale + mask) followed by dropout. Eager: Mul, Add, Softmax (in fp32 under autocast),
  // Dropout, as Hugging Face writes it. Fused (apex/Megatron's scaled masked softmax with dropout): one Softmax
  // op [x, mask, scale] -> [y, dropout mask, probabilities] in the activations' dtype (attr fused_mask_dropout=1),
  // whose backward is one SoftmaxBwd.
  TensorId scaled_masked_softmax_dropout(TensorId x, TensorId mask, TensorId scale, double p, const std::string& prefix);
  TensorId embedding(TensorId ids, int64_t vocab, int64_t dim, const std::string& name = "");
  // Reuses an existing weight (tied embeddings): a linear layer whose weight is `weight`.
  TensorId linear_with_weight(TensorId x, TensorId weight, bool bias, const std::string& name = "");
  // `labels`: the int64 class of each row, one per row; kNoTensor: an input of the batch made here.
  TensorId cross_entropy_loss(TensorId logits, const std::string& name = "loss", TensorId labels = kNoTensor);

  // BERT's pooler: x.select(axis, index) (a view in PyTorch) and tanh, ops of kind Other with sub-kinds Select and
  // Tanh (workloads/op_kind.h), as they have no OpKind of their own. training_backward.cc's generic rule for Other
  // (the backward reads the inputs and the output) over-approximates what autograd keeps for them (select keeps
  // nothing, tanh its output), but no loss reads the pooler's output, so no backward is synthesised for them at all.
  TensorId select(TensorId x, int64_t axis, int64_t index, const std::string& name = "");
  TensorId tanh(TensorId x, const std::string& name = "");

  // A learnable parameter created by the caller (e.g. an ONNX initializer of an op we map by hand), in the
  // weights' dtype.
  TensorId parameter(const std::vector<int64_t>& shape, const std::string& name);

  // The model's blocks (Graph::blocks): every op built between begin_block and end_block belongs to the block
  // named `name` (a module path, e.g. "layer1.0"). Blocks do not nest.
  void begin_block(const std::string& name);
  void end_block();

  const Graph& graph() const { return g_; }
  Graph& graph() { return g_; }
  // The finished forward graph (every op Phase::Forward).
  Graph finish();

 private:
  Graph g_;
  DType act_dtype_;
  BuildOptions opts_;
  bool autocast() const { return opts_.activations != opts_.weights; }
  // What autocast runs in fp32 (softmax, layer norm, losses): F32 under autocast, else the activations' dtype.
  DType fp32_op_dtype() const { return autocast() ? DType::F32 : act_dtype_; }
  void mark_tf32(Op& op, bool convolution) const;  // the non-default TF32 choice, as an attribute
  int counter_ = 0;
  size_t block_first_op_ = 0;  // the first op of the open block
  bool in_block_ = false;
  std::map<TensorId, TensorId> weight_casts_;  // autocast's cast cache: fp32 weight -> its bf16 copy
  std::string auto_name(const std::string& prefix, const std::string& given);
  TensorId cast_for(TensorId x, DType to, const std::string& layer);  // autocast's cast, when needed
  TensorId rms_norm_fused(TensorId x, TensorId w, const std::string& n);  // kernels: fused's one RMSNorm op
  TensorId rotary_fused(TensorId x, TensorId cos, TensorId sin, const std::string& n);  // kernels: fused's one op
};

}  // namespace dlsim
