#include "workloads/zoo.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "workloads/cnn_models.h"
#include "workloads/llama_models.h"
#include "workloads/onnx_import.h"
#include "workloads/torch_step_graph.h"
#include "workloads/transformer_models.h"

namespace dlsim {

const std::vector<ModelInfo>& model_zoo() {
  constexpr auto kTokens = ModelInfo::Input::Tokens;
  static const std::vector<ModelInfo> zoo = {
      {"alexnet", "torchvision AlexNet, 224x224", build_alexnet},
      {"vgg16", "torchvision VGG-16 (no batch norm), 224x224", build_vgg16},
      {"vgg19", "torchvision VGG-19 (no batch norm), 224x224", build_vgg19},
      {"resnet18", "torchvision ResNet-18, 224x224", build_resnet18},
      {"resnet50", "torchvision ResNet-50, 224x224", build_resnet50},
      {"resnet101", "torchvision ResNet-101, 224x224", build_resnet101},
      {"resnet152", "torchvision ResNet-152, 224x224", build_resnet152},
      {"resnext101-32x4d", "ResNeXt-101 32x4d (NVIDIA DeepLearningExamples' layout), 224x224", build_resnext101_32x4d},
      {"googlenet", "torchvision GoogLeNet without auxiliary heads, 224x224", build_googlenet},
      {"inception_v3", "torchvision Inception-v3 without auxiliary head, 299x299", build_inception_v3},
      {"densenet121", "torchvision DenseNet-121, 224x224", build_densenet121},
      {"mobilenet_v2", "torchvision MobileNet-V2, 224x224", build_mobilenet_v2},
      {"squeezenet1_1", "torchvision SqueezeNet 1.1, 224x224", build_squeezenet1_1},
      {"bert-base", "BERT-base (Hugging Face layout), masked-LM training", build_bert_base, false, kTokens},
      {"bert-base-squad", "BERT-base fine-tuned on SQuAD (2-logit question-answering head), sequence 384",
       build_bert_base_squad, false, kTokens},
      {"bert-large-squad", "BERT-large fine-tuned on SQuAD (2-logit question-answering head), sequence 384",
       build_bert_large_squad, false, kTokens},
      {"gpt2-small", "GPT-2 small (124M), causal-LM training", build_gpt2_small, false, kTokens, true},
      {"cifar-alexnet", "SINGA's CIFAR-10 AlexNet (cuda-convnet style), 32x32", build_cifar_alexnet},
      {"cifar-vgg16", "SINGA's CIFAR-10 VGG-16 with batch norm and dropout, 32x32", build_cifar_vgg16},
      {"cifar-resnet20", "SINGA's CIFAR-10 ResNet-20, 32x32", build_cifar_resnet20},
      {"llama3.2-1b", "Llama 3.2 1B (meta-llama/Llama-3.2-1B), causal-LM training, sequence 2048", build_llama3_2_1b, true, kTokens},
      {"llama3-8b", "Llama 3 8B (meta-llama/Meta-Llama-3-8B), causal-LM training, sequence 2048", build_llama3_8b, true, kTokens},
      {"llama2-7b", "Llama 2 7B (meta-llama/Llama-2-7b-hf), causal-LM training, sequence 2048", build_llama2_7b, true, kTokens},
      {"llama2-13b", "Llama 2 13B (meta-llama/Llama-2-13b-hf), causal-LM training, sequence 2048", build_llama2_13b, true, kTokens},
      {"mistral-7b", "Mistral 7B v0.1 (mistralai/Mistral-7B-v0.1), causal-LM training, sequence 2048", build_mistral_7b, true, kTokens},
      {"qwen2.5-0.5b", "Qwen2.5 0.5B (Qwen/Qwen2.5-0.5B), causal-LM training, sequence 2048", build_qwen2_5_0_5b, true, kTokens},
  };
  return zoo;
}

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  for (const ModelInfo& m : model_zoo()) names.push_back(m.name);
  return names;
}
}  // namespace

ModelSettings model_settings(const std::string& name_or_path) {
  ModelSettings s;
  if (is_torch_step_path(name_or_path)) {  // a recorded step: shapes, batch and numerics are the file's
    s.max_graph_nodes = true;
    return s;
  }
  if (ends_with(name_or_path, ".onnx")) {
    s.memory_format = true;
    s.max_graph_nodes = true;
    return s;
  }
  if (ends_with(name_or_path, ".json")) {  // a Llama-family config.json
    s.seq_len = true;
    s.attention = {kAttentionChoices.begin(), kAttentionChoices.end()};
    s.max_graph_nodes = true;
    s.tensor_parallel = true;
    return s;
  }
  for (const ModelInfo& m : model_zoo()) {
    if (m.name != name_or_path) continue;
    if (m.input == ModelInfo::Input::Images) {
      s.image_size = true;
      s.memory_format = true;
    } else {
      s.seq_len = true;
      s.attention = {Attention::Eager};
      if (m.llm || m.sdpa_flash) s.attention.push_back(Attention::SdpaFlash);
      s.max_graph_nodes = m.llm;  // the graph-size estimate from the layer count (workloads/llama_models.h)
      s.tensor_parallel = m.llm;
    }
    return s;
  }
  throw ConfigError("", 0, "model", "unknown model '" + name_or_path + "'; valid: " + join(zoo_names()) +
                                        ", a path ending in .onnx, a Llama-family config.json (ending in .json), or "
                                        "a recorded PyTorch step (ending in " + kTorchStepSuffix + ")");
}

namespace {
// sdpa-flash on a model not built with it: the graph asked for cannot be built, whoever asks.
void check_flash_built(const std::string& name_or_path, const ModelSettings& s, const ModelOptions& opts) {
  if (opts.attention != Attention::SdpaFlash ||
      std::find(s.attention.begin(), s.attention.end(), Attention::SdpaFlash) != s.attention.end())
    return;
  std::vector<std::string> flash;
  for (const ModelInfo& f : model_zoo())
    if (f.llm || f.sdpa_flash) flash.push_back(f.name);
  throw ConfigError(name_or_path, 0, "attention", "'" + name_or_path + "' is built with eager attention only; "
                    "sdpa-flash is built for " + join(flash) + " and Llama-family config.json files");
}

// Tensor parallelism is built into the Llama family's builder only: elsewhere a tp other than 1 would be dropped.
void check_tensor_parallel_built(const std::string& name_or_path, const ModelSettings& s, const ModelOptions& opts) {
  if (s.tensor_parallel) return;
  const char* key = opts.tp != 1              ? "tp"
                    : opts.sequence_parallel ? "sequence_parallel"
                    : opts.tp_across_nodes   ? "tp_across_nodes"
                                             : nullptr;
  if (key)
    throw ConfigError(name_or_path, 0, key, std::string("tensor parallelism is built for the Llama family only; '") +
                                              name_or_path + "' is built whole: " + key + " means nothing to it");
}
}  // namespace

void check_model_settings(const std::string& name_or_path, const ModelOptions& opts) {
  const ModelSettings s = model_settings(name_or_path);
  const char* what = is_torch_step_path(name_or_path) ? "a recorded PyTorch step (its shapes are the file's)"
                     : ends_with(name_or_path, ".onnx")  ? "an ONNX model (its shapes are the file's)"
                     : s.image_size                      ? "an image model"
                                                         : "a token model";
  if (opts.image_size != 0 && !s.image_size)
    throw ConfigError(name_or_path, 0, "image_size", "'" + name_or_path + "' is " + what + ": image_size means nothing to it");
  if (opts.seq_len != 0 && !s.seq_len)
    throw ConfigError(name_or_path, 0, "seq_len", "'" + name_or_path + "' is " + what + ": seq_len means nothing to it");
  if (opts.training.memory_format != MemoryFormat::NCHW && !s.memory_format)
    throw ConfigError(name_or_path, 0, "memory_format", "'" + name_or_path + "' is " + what + " without convolutions: memory_format " +
                                                           to_string(opts.training.memory_format) + " means nothing to it");
  if (opts.max_graph_nodes != kDefaultMaxGraphNodes && !s.max_graph_nodes)
    throw ConfigError(name_or_path, 0, "max_graph_nodes", "'" + name_or_path + "' has no graph-size limit (it bounds ONNX "
                      "files and the Llama family): max_graph_nodes means nothing to it");
  if (opts.attention && s.attention.empty())
    throw ConfigError(name_or_path, 0, "attention", "'" + name_or_path + "' is " + what + ": attention means nothing to it");
  check_flash_built(name_or_path, s, opts);
  check_tensor_parallel_built(name_or_path, s, opts);
}

Graph build_forward_graph(const std::string& name_or_path, const ModelOptions& opts) {
  // Settings that change nothing (seq_len on a CNN) are the readers' to refuse (check_model_settings): callers
  // in code set some uniformly (nhwc for every model the CUDA harness runs).
  check_flash_built(name_or_path, model_settings(name_or_path), opts);
  check_tensor_parallel_built(name_or_path, model_settings(name_or_path), opts);
  if (is_torch_step_path(name_or_path))
    throw ConfigError(name_or_path, 0, "model", "a recorded PyTorch step is a whole training step, not a forward graph "
                      "(build_training_graph loads it)");
  if (ends_with(name_or_path, ".onnx")) {
    if (!onnx_import_available())
      throw ConfigError(name_or_path, 0, "model", "this dlsim was built without the ONNX importer (libonnx-dev)");
    return import_onnx_forward(name_or_path, opts);
  }
  if (opts.batch <= 0) throw ConfigError(name_or_path, 0, "batch", "batch size must be positive, got " + std::to_string(opts.batch));
  if (ends_with(name_or_path, ".json"))
    return build_llama(load_llama_config(name_or_path), opts);  // a Hugging Face config.json (Llama family)
  for (const ModelInfo& m : model_zoo())
    if (m.name == name_or_path) return m.build_forward(opts);
  throw std::logic_error("model_settings knew '" + name_or_path + "' and the zoo does not");
}

Graph build_training_graph(const std::string& name_or_path, const ModelOptions& opts) {
  if (is_torch_step_path(name_or_path)) {  // recorded whole: backward and optimizer are PyTorch's own
    Graph g = load_torch_step(name_or_path, opts.max_graph_nodes).graph;
    if (opts.batch != g.batch)
      throw ConfigError(name_or_path, 0, "batch", "the step was recorded at batch " + std::to_string(g.batch) + ", not " +
                        std::to_string(opts.batch) + " (record another with dlsim import-torch --batch)");
    return g;
  }
  return make_training_graph(build_forward_graph(name_or_path, opts), opts.training);
}

ModelSummary summarize(const Graph& forward, const Graph& training) {
  ModelSummary s;
  for (const Op& o : forward.ops())
    if (o.phase == Phase::Forward && (o.kind == OpKind::Conv2d || o.kind == OpKind::Linear ||
                                      o.kind == OpKind::MatMul || o.kind == OpKind::FlashAttention))
      s.fwd_macs += static_cast<double>(o.attr(Attr::macs));
  // Parameters: what PyTorch's model.parameters() counts, including weights the loss does not reach (BERT's
  // pooler under the masked-LM loss gets no gradient and no update, but is a parameter).
  for (const Tensor& t : forward.tensors()) {
    if (!t.learnable) continue;
    uint64_t n = 1;
    for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
    s.params += n;
  }
  std::vector<char> produced_fwd(training.tensors().size(), 0), read_bwd(training.tensors().size(), 0);
  for (const Op& o : training.ops()) {
    if (o.phase == Phase::Forward)
      for (TensorId t : o.outputs) produced_fwd[static_cast<size_t>(t)] = 1;
    if (o.phase == Phase::Backward)
      for (TensorId t : o.inputs) read_bwd[static_cast<size_t>(t)] = 1;
  }
  for (const Tensor& t : training.tensors())
    if (t.kind == TensorKind::Activation && !t.persistent && produced_fwd[static_cast<size_t>(t.id)] && read_bwd[static_cast<size_t>(t.id)])
      s.saved_for_backward_bytes += t.bytes;
  s.ops = training.ops().size();
  s.tensors = training.tensors().size();
  return s;
}

std::vector<Lifetime> tensor_lifetimes(const Graph& g, const std::vector<OpId>& order) {
  std::vector<Lifetime> life(g.tensors().size());
  auto touch = [&](TensorId t, int pos) {
    Lifetime& l = life.at(static_cast<size_t>(t));
    if (l.first < 0) l.first = pos;
    l.last = pos;
  };
  for (size_t pos = 0; pos < order.size(); ++pos) {
    OpId id = order[pos];
    if (id < 0 || static_cast<size_t>(id) >= g.ops().size())
      throw ConfigError(g.name, 0, "order", "issue order position " + std::to_string(pos) + " names op " + std::to_string(id) + ", which does not exist");
    const Op& o = g.op(id);
    for (TensorId t : o.inputs) touch(t, static_cast<int>(pos));
    for (TensorId t : o.outputs) touch(t, static_cast<int>(pos));
    if (o.workspace != kNoTensor) touch(o.workspace, static_cast<int>(pos));
  }
  return life;
}

}  // namespace dlsim
