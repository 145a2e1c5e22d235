#pragma once
// Llama-family decoder-only models (Llama 2, Llama 3, Mistral, Qwen2), built from a config as Hugging Face's
// LlamaForCausalLM runs them in training: RMSNorm, rotary embeddings, grouped-query attention (eager or
// FlashAttention through PyTorch's SDPA), the SwiGLU MLP and the shifted causal-LM loss. What autograd keeps is
// checked against PyTorch (validate/torch/torch_reference_llama.py, docs/models.md).
#include <cstdint>
#include <string>

#include "workloads/graph.h"
#include "workloads/model_options.h"

namespace dlsim {

// The fields of a Hugging Face config.json that decide the graph (the JSON keys in the comments; errors name them).
struct LlamaConfig {
  std::string name;                // the zoo name
  std::string source;              // where the figures come from: the Hugging Face repo id of the config.json
  int64_t vocab = 0;               // vocab_size
  int64_t hidden = 0;              // hidden_size
  int64_t layers = 0;              // num_hidden_layers
  int64_t heads = 0;               // num_attention_heads
  int64_t kv_heads = 0;            // num_key_value_heads
  int64_t intermediate = 0;        // intermediate_size
  int64_t max_positions = 0;       // max_position_embeddings: the longest sequence
  bool tied_embeddings = false;    // tie_word_embeddings: lm_head reuses embed_tokens
  bool qkv_bias = false;           // Qwen2's q/k/v projections have biases (attention_bias)
};

// The presets, from each model's config.json on the Hugging Face Hub (LlamaConfig::source names the repo).
LlamaConfig llama3_2_1b_config();   // meta-llama/Llama-3.2-1B: 1,235,814,400 parameters
LlamaConfig llama3_8b_config();     // meta-llama/Meta-Llama-3-8B: 8,030,261,248
LlamaConfig llama2_7b_config();     // meta-llama/Llama-2-7b-hf: 6,738,415,616
LlamaConfig llama2_13b_config();    // meta-llama/Llama-2-13b-hf: 13,015,864,320
LlamaConfig mistral_7b_config();    // mistralai/Mistral-7B-v0.1: 7,241,732,096
LlamaConfig qwen2_5_0_5b_config();  // Qwen/Qwen2.5-0.5B: 494,032,768

// The sequence length a preset is built at when ModelOptions::seq_len is 0 (or the model's maximum, if shorter).
inline constexpr int64_t kLlamaDefaultSeqLen = 2048;

// A Hugging Face config.json of a Llama-family model (model_type llama, mistral or qwen2): the fields above, with
// HF's defaults for the optional ones (num_key_value_heads: the heads; tie_word_embeddings: false; attention_bias:
// false, always true for qwen2); a null value of num_key_value_heads or head_dim is absent, as transformers
// reads None. What the graph cannot express (an activation other than silu, MLP biases, a
// head_dim other than hidden_size / num_attention_heads) is refused. Every error names the file, line and field.
LlamaConfig load_llama_config(const std::string& path);
// The same from the file's text (`path` names it in errors): the fuzz target's entry point.
LlamaConfig parse_llama_config(const std::string& text, const std::string& path);

// Parameters the config implies (embeddings, per-layer projections, norms, head), without building the graph.
uint64_t llama_parameter_count(const LlamaConfig& c);

// Throws ConfigError naming the field (hidden_size, num_attention_heads, num_key_value_heads, ...) for a config
// that cannot be built, and max_graph_nodes when the graph would exceed what dlsim itself may hold.
void check_llama_config(const LlamaConfig& c, const ModelOptions& opts);

// The forward graph. opts.attention: nullopt or SdpaFlash builds FlashAttention (PyTorch 2's default on these
// GPUs), Eager the scores matrix. A sequence longer than max_positions (or shorter than 2: the loss is shifted by
// one position) is a ConfigError naming seq_len.
Graph build_llama(const LlamaConfig& c, const ModelOptions& opts);

Graph build_llama3_2_1b(const ModelOptions& opts);
Graph build_llama3_8b(const ModelOptions& opts);
Graph build_llama2_7b(const ModelOptions& opts);
Graph build_llama2_13b(const ModelOptions& opts);
Graph build_mistral_7b(const ModelOptions& opts);
Graph build_qwen2_5_0_5b(const ModelOptions& opts);

}  // namespace dlsim
