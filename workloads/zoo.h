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
  // A Llama-family decoder (workloads/llama_models.h), sized in billions of parameters, so the zoo-wide tests
  // (every policy on every model) leave them to their own tests, and the CUDA harness (validate/) has no kernels
  // for their RMSNorm, rotary and FlashAttention ops yet. Built with Attention::SdpaFlash by default.
  bool llm = false;
  // What the model reads: images (image_size) or token sequences (seq_len, attention).
  enum class Input : uint8_t { Images, Tokens } input = Input::Images;
  // Built with Attention::SdpaFlash too, by default (GPT-2 as transformers 5 runs it); eager stays buildable.
  bool sdpa_flash = false;
};

const std::vector<ModelInfo>& model_zoo();
// The settings of ModelOptions a model reads beyond the batch and the rest of the training setup: an image model
// its image_size and memory_format; a token model its seq_len and the attention modes built for it (sdpa-flash
// for the Llama family and GPT-2); an ONNX file its memory_format (its shapes are the file's, only the batch axis is
// replaced); max_graph_nodes bounds what is built from a file or a layer count (ONNX, the Llama family).
struct ModelSettings {
  bool image_size = false;
  bool seq_len = false;
  std::vector<Attention> attention;  // empty: attention is no setting of the model
  bool memory_format = false;        // nhwc changes only convolutions, which token models have none of
  bool max_graph_nodes = false;
  bool tensor_parallel = false;      // tp, sequence_parallel, tp_across_nodes: the Llama family's (tensor_parallel.h)
};
// For a zoo name, a path ending in .onnx, one ending in .torchstep.json (a recorded PyTorch step: it reads none of
// the settings but max_graph_nodes) or one ending in .json (a Llama-family config.json); an unknown name throws
// ConfigError listing the zoo.
ModelSettings model_settings(const std::string& name_or_path);
// Throws ConfigError(name_or_path, 0, key) for a setting of `opts` the model does not read (an image_size or
// seq_len other than 0, the model's default; an attention mode it is not built with; memory_format nhwc;
// max_graph_nodes other than its default): a setting that would be silently ignored is a mistake to name, not a
// result to print. The readers of user input call it (experiments, published points, `dlsim model`);
// build_forward_graph refuses only what it cannot build (sdpa-flash on a model built with eager attention only).
void check_model_settings(const std::string& name_or_path, const ModelOptions& opts);

// A zoo name, a path ending in .onnx, or a Hugging Face config.json of a Llama-family model (a path ending in .json,
// workloads/llama_models.h) -> the training graph. A recorded PyTorch step (workloads/torch_step_graph.h) is its
// graph as recorded (its batch must be opts.batch; build_forward_graph refuses it). Unknown names throw ConfigError
// listing the zoo.
Graph build_training_graph(const std::string& name_or_path, const ModelOptions& opts);
Graph build_forward_graph(const std::string& name_or_path, const ModelOptions& opts);

// Figures `dlsim model` prints.
struct ModelSummary {
  uint64_t params = 0;                    // learnable parameters (elements)
  double fwd_macs = 0;                    // multiply-accumulates of conv, linear/matmul and FlashAttention (those it
                                          // performs: half of QK^T and PV under the causal mask) layers, one forward
                                          // (the forward-phase ops of a graph given whole as `forward`)
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
