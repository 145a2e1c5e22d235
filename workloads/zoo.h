#pragma once
// The model zoo: builders by name, and ONNX files, both to a training graph.
#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "workloads/graph.h"
#include "workloads/training.h"

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
  // nullopt: the model's default (sdpa-flash for the Llama family, eager for BERT and GPT-2, which are built
  // only that way).
  std::optional<Attention> attention;
  TrainingOptions training;
  // The most nodes (and initializers) an ONNX file may hold: checked before the graph is built, so that a file
  // of a billion nodes is an error naming this limit rather than an out-of-memory kill. Raised by the
  // experiment's `max_graph_nodes` or `dlsim model --max-graph-nodes`.
  int64_t max_graph_nodes = kDefaultMaxGraphNodes;
};

struct ModelInfo {
  std::string name;
  std::string description;
  std::function<Graph(const ModelOptions&)> build_forward;
  // A Llama-family decoder (workloads/llama_models.h): the only models built with Attention::SdpaFlash, and sized
  // in billions of parameters, so the zoo-wide tests (every policy on every model) leave them to their own tests,
  // and the CUDA harness (validate/) has no kernels for their RMSNorm, rotary and FlashAttention ops yet.
  bool llm = false;
};

const std::vector<ModelInfo>& model_zoo();
// A zoo name, a path ending in .onnx, or a Hugging Face config.json of a Llama-family model (a path ending in .json,
// workloads/llama_models.h) -> the training graph. Unknown names throw ConfigError listing the zoo.
Graph build_training_graph(const std::string& name_or_path, const ModelOptions& opts);
Graph build_forward_graph(const std::string& name_or_path, const ModelOptions& opts);

// Figures `dlsim model` prints.
struct ModelSummary {
  uint64_t params = 0;                    // learnable parameters (elements)
  double fwd_macs = 0;                    // multiply-accumulates of conv, linear/matmul and FlashAttention (those it
                                          // performs: half of QK^T and PV under the causal mask) layers, one forward
  uint64_t saved_for_backward_bytes = 0;  // distinct activations the backward keeps (params, input excluded)
  size_t ops = 0;                         // training graph
  size_t tensors = 0;
};
ModelSummary summarize(const Graph& forward, const Graph& training);

// Tensor lifetimes under an issue order: the position of the first and last op touching each tensor.
struct Lifetime {
  int first = -1;  // -1: never used
  int last = -1;
};
std::vector<Lifetime> tensor_lifetimes(const Graph& g, const std::vector<OpId>& order);

}  // namespace dlsim
