#pragma once
// The model zoo: builders by name, and ONNX files, both to a training graph.
#include <functional>
#include <string>
#include <vector>

#include "workloads/graph.h"
#include "workloads/model_options.h"
#include "workloads/training.h"

namespace dlsim {

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
