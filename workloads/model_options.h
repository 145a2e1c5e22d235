#pragma once
// What a model is built with: batch, input size, sequence length, attention, the training setup and the ONNX size
// limit. Apart from zoo.h so that the builders (cnn_models.h, transformer_models.h, llama_models.h, onnx_import.h),
// which the zoo lists, need not include the zoo.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "workloads/training_options.h"

namespace dlsim {

// The default of ModelOptions::max_graph_nodes: 100 times the largest zoo model's ONNX export (GPT-2 small's
// about 2,500 nodes after constant folding; BERT-large's about 4,000).
inline constexpr int64_t kDefaultMaxGraphNodes = 1000000;

// How attention is computed (Hugging Face's attn_implementation): Eager materialises the S x S scores and
// probabilities (what autograd keeps of them); SdpaFlash is PyTorch 2's scaled_dot_product_attention on its
// FlashAttention kernel, which keeps only q, k, v, the output and a per-row log-sum-exp (docs/models.md).
enum class Attention : uint8_t { Eager, SdpaFlash };
const char* to_string(Attention a);  // "eager", "sdpa-flash"
inline constexpr std::array kAttentionChoices = {Attention::Eager, Attention::SdpaFlash};

struct ModelOptions {
  int64_t batch = 32;
  int64_t image_size = 0;  // 0: the model's default (224, 299 for inception_v3, 32 for CIFAR)
  int64_t seq_len = 0;     // 0: the model's default
  // nullopt: the model's default (sdpa-flash for the Llama family and GPT-2, eager for BERT, which is built only
  // that way). GPT-2's eager form is also transformers 4's MLP and loss (workloads/transformer_models.cc).
  std::optional<Attention> attention;
  TrainingOptions training;
  // The most nodes (and initializers) an ONNX file may hold: checked before the graph is built, so that a file
  // of a billion nodes is an error naming this limit rather than an out-of-memory kill. Raised by the
  // experiment's `max_graph_nodes` or `dlsim model --max-graph-nodes`.
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;
  // Tensor parallelism (workloads/tensor_parallel.h): the graph is one rank's of `tp`, Megatron-LM's column and
  // row splits of attention and MLP with their all-reduces; 1 builds the plain graph. The Llama family only.
  int64_t tp = 1;
  // Megatron's sequence parallelism on top of tp > 1: norms and residuals on S / tp tokens, an all-gather before
  // and a reduce-scatter after each tensor-parallel block instead of the all-reduces. Nothing at tp 1.
  bool sequence_parallel = false;
  // Lets the tensor-parallel group span nodes (its collectives then fill nodes, hw/collective_op.h); without it a
  // tp above the hardware file's node.gpus_per_node is an error when the collectives are priced.
  bool tp_across_nodes = false;
};

// opts.image_size, or `fallback` when it is 0; a negative size is a ConfigError.
int64_t image_size_or(const ModelOptions& opts, int64_t fallback, const std::string& model);

}  // namespace dlsim
