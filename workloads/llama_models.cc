// Llama-family decoders as Hugging Face's modeling_llama.py (transformers 5) runs them, op for op where
// autograd keeps something, one op per fused group where it keeps little (the rotary tables, SiLU: model_builder.h);
// RMSNorm and apply_rotary_pos_emb op for op, as eager PyTorch's kernels (kernels: fused: one op each).
//
// Per decoder layer (a block, what activation checkpointing segments):
//   input_layernorm (RMSNorm); q/k/v projections (biases for Qwen2), viewed as (B, S, heads, d); rotary on q and
//   k; repeat_kv on k and v when kv_heads < heads; attention; o_proj; the residual add; post_attention_layernorm;
//   gate_proj, up_proj, SiLU, their product, down_proj; the residual add.
// Attention, eager: matmul(q, k^T), the scale, the additive causal mask (an input, no gradient), softmax in fp32,
// cast back to q's dtype, matmul with v, transpose + contiguous (a copy), o_proj. Attention dropout is 0.0 in
// every preset, so no dropout op exists (PyTorch returns the input for p = 0).
// Attention, sdpa-flash: one FlashAttention op on q, the repeated k and v (HF's SDPA path repeats them first).
// Head (transformers 5's ForCausalLMLoss): the final norm, lm_head (tied to embed_tokens for Llama 3.2 1B and
// Qwen2.5), logits.float(), the labels padded by one position and shifted (int64 copies), cross entropy over
// every position. (transformers 4 shifted the logits instead, a copy of all but the last position.)
// Deliberate differences from PyTorch:
//   - the head split of V (a transposed view in PyTorch) is a Reshape view here when FlashAttention reads it;
//   - torch.matmul copies the rotary outputs of q and k (and V without repeat) into (B*heads, S, d) when the
//     batch is above 1; the copy, not the rotary output, is what it keeps, of the same size. Not built here;
//   - at batch 1 labels[..., 1:] is contiguous, so PyTorch keeps the padded labels ((S + 1) int64) where this
//     keeps the shifted copy (S int64): 8 bytes. nll_loss's 4-byte total_weight is not built;
//   - Mistral's sliding window (4096) is not applied: at sequences up to 4096 it changes nothing.
// With sdpa and no padding transformers 5 passes no mask (is_causal=True). A step recorded on fake tensors builds
// and keeps a (1, 1, S, S) mask per layer all the same: transformers' packed-sequence check
// (masking_utils.find_packed_sequence_indices) cannot read a fake tensor's values and keeps the mask (a real CPU or
// GPU step passes None; checked on transformers 5.24).
#include "workloads/llama_models.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <vector>

#include "common/config_error.h"
#include "common/strings.h"
#include "common/yaml_reader.h"
#include "workloads/causal_lm_loss.h"
#include "workloads/model_builder.h"
#include "workloads/tensor_parallel.h"

namespace dlsim {
namespace {

// What the graph holds per decoder layer, at most (forward ops, casts and their backward and optimizer ops), and
// the host bytes one op with its tensors takes: the estimate the graph-size limit is checked on before building.
constexpr int64_t kOpsPerLayerBound = 160;
constexpr int64_t kOpsOutsideLayers = 100;
constexpr int64_t kHostBytesPerOp = 1024;

[[noreturn]] void fail(const LlamaConfig& c, const std::string& key, const std::string& msg) {
  throw ConfigError(c.name, 0, key, msg);
}

int64_t seq_len_of(const LlamaConfig& c, const ModelOptions& opts) {
  if (opts.seq_len < 0) fail(c, "seq_len", "sequence length must be positive, got " + std::to_string(opts.seq_len));
  const int64_t s = opts.seq_len == 0 ? std::min(kLlamaDefaultSeqLen, c.max_positions) : opts.seq_len;
  if (s > c.max_positions)
    fail(c, "seq_len", "sequence length " + std::to_string(s) + " exceeds the model's max_position_embeddings " +
                           std::to_string(c.max_positions));
  if (s < 2) fail(c, "seq_len", "sequence length must be at least 2 (the causal-LM loss is shifted by one), got 1");
  return s;
}

}  // namespace

// Each from the model's config.json on the Hugging Face Hub (the repo in `source`), fields in LlamaConfig's order.
LlamaConfig llama3_2_1b_config() {
  return {"llama3.2-1b", "meta-llama/Llama-3.2-1B", 128256, 2048, 16, 32, 8, 8192, 131072, true, false};
}
LlamaConfig llama3_8b_config() {
  return {"llama3-8b", "meta-llama/Meta-Llama-3-8B", 128256, 4096, 32, 32, 8, 14336, 8192, false, false};
}
LlamaConfig llama2_7b_config() {
  return {"llama2-7b", "meta-llama/Llama-2-7b-hf", 32000, 4096, 32, 32, 32, 11008, 4096, false, false};
}
LlamaConfig llama2_13b_config() {
  return {"llama2-13b", "meta-llama/Llama-2-13b-hf", 32000, 5120, 40, 40, 40, 13824, 4096, false, false};
}
LlamaConfig mistral_7b_config() {
  return {"mistral-7b", "mistralai/Mistral-7B-v0.1", 32000, 4096, 32, 32, 8, 14336, 32768, false, false};
}
LlamaConfig qwen2_5_0_5b_config() {
  return {"qwen2.5-0.5b", "Qwen/Qwen2.5-0.5B", 151936, 896, 24, 14, 2, 4864, 32768, true, true};
}

namespace {

// config.json is JSON, which yaml-cpp reads as YAML (through the same limits as every YAML input: an alias cycle
// or a billion laughs in a "JSON" file is refused): YamlMap gives every error its line.
LlamaConfig llama_config_from_yaml(const YAML::Node& doc, const std::string& path) {
  const YamlMap m(doc, path);
  LlamaConfig c;
  c.name = path;  // the graph's name, and the file later errors (a sequence too long, a graph too large) name
  c.source = path;
  const std::string type = m.get_string("model_type");
  const std::vector<std::string> types = {"llama", "mistral", "qwen2"};  // the families this builder follows
  if (std::find(types.begin(), types.end(), type) == types.end())
    m.fail("model_type", "model_type '" + type + "' is not built here; valid: " + join(types));
  c.vocab = m.get_int("vocab_size");
  c.hidden = m.get_int("hidden_size");
  c.layers = m.get_int("num_hidden_layers");
  c.heads = m.get_int("num_attention_heads");
  // transformers' LlamaConfig (and Mistral's, Qwen2's): num_key_value_heads None, null in config.json, means as
  // many as the attention heads (no grouped-query attention).
  const bool kv_given = m.has("num_key_value_heads") && !m.get("num_key_value_heads").IsNull();
  c.kv_heads = kv_given ? m.get_int("num_key_value_heads") : c.heads;
  c.intermediate = m.get_int("intermediate_size");
  c.max_positions = m.get_int("max_position_embeddings");
  c.tied_embeddings = m.get_bool("tie_word_embeddings", false);
  c.qkv_bias = type == "qwen2" || m.get_bool("attention_bias", false);
  if (m.get_string("hidden_act", "silu") != "silu")
    m.fail("hidden_act", "only silu (SwiGLU) is built, got '" + m.get_string("hidden_act") + "'");
  if (m.get_bool("mlp_bias", false)) m.fail("mlp_bias", "MLP biases are not built");
  if (m.has("head_dim") && !m.get("head_dim").IsNull() && c.heads > 0 &&
      m.get_int("head_dim") != c.hidden / c.heads)
    m.fail("head_dim", "head_dim " + std::to_string(m.get_int("head_dim")) + " other than hidden_size / "
                       "num_attention_heads is not built");
  // The config's own consistency, with the offending field's line.
  try {
    ModelOptions unlimited;
    unlimited.max_graph_nodes = std::numeric_limits<int64_t>::max();
    check_llama_config(c, unlimited);
  } catch (const ConfigError& e) {
    throw ConfigError(path, m.line_of(e.key()), e.key(), e.message());
  }
  return c;
}

}  // namespace

LlamaConfig load_llama_config(const std::string& path) { return llama_config_from_yaml(load_yaml_file(path), path); }

LlamaConfig parse_llama_config(const std::string& text, const std::string& path) {
  return llama_config_from_yaml(parse_yaml_text(text, path), path);
}

uint64_t llama_parameter_count(const LlamaConfig& c) {
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  const uint64_t h = u(c.hidden), d = u(c.hidden / c.heads), q = u(c.heads) * d, kv = u(c.kv_heads) * d;
  const uint64_t layer = h * q + 2 * h * kv + q * h + 3 * h * u(c.intermediate) + 2 * h + (c.qkv_bias ? q + 2 * kv : 0);
  return u(c.vocab) * h * (c.tied_embeddings ? 1 : 2) + u(c.layers) * layer + h;
}

void check_llama_config(const LlamaConfig& c, const ModelOptions& opts) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"vocab_size", c.vocab},          {"hidden_size", c.hidden},         {"num_hidden_layers", c.layers},
      {"num_attention_heads", c.heads}, {"num_key_value_heads", c.kv_heads}, {"intermediate_size", c.intermediate},
      {"max_position_embeddings", c.max_positions}};
  for (const auto& [key, v] : sizes)
    if (v <= 0) fail(c, key, std::string(key) + " must be positive, got " + std::to_string(v));
  if (c.hidden % c.heads != 0)
    fail(c, "num_attention_heads", "hidden_size " + std::to_string(c.hidden) + " is not divisible by " +
                                       std::to_string(c.heads) + " attention heads");
  if (c.heads % c.kv_heads != 0)
    fail(c, "num_key_value_heads", std::to_string(c.kv_heads) + " key/value heads do not divide " +
                                       std::to_string(c.heads) + " attention heads");
  if ((c.hidden / c.heads) % 2 != 0)
    fail(c, "num_attention_heads", "the head size hidden_size / num_attention_heads = " +
                                       std::to_string(c.hidden / c.heads) + " must be even for rotary embeddings");
  // The graph dlsim would hold: checked before building, so that a config of a billion layers is an error with the
  // estimate rather than an out-of-memory kill.
  const int64_t max_layers = (std::numeric_limits<int64_t>::max() - kOpsOutsideLayers) / kOpsPerLayerBound;
  if (c.layers > max_layers || c.layers * kOpsPerLayerBound + kOpsOutsideLayers > opts.max_graph_nodes) {
    const double ops = static_cast<double>(c.layers) * kOpsPerLayerBound + kOpsOutsideLayers;
    char estimate[128];
    std::snprintf(estimate, sizeof estimate, "up to %.3g ops (about %.3g MiB of dlsim's own memory)", ops,
                  ops * kHostBytesPerOp / (1 << 20));
    fail(c, "num_hidden_layers",
         std::to_string(c.layers) + " layers would make a training graph of " + estimate + ", above max_graph_nodes " +
             std::to_string(opts.max_graph_nodes) + ": raise max_graph_nodes or use fewer layers");
  }
}

Graph build_llama(const LlamaConfig& c, const ModelOptions& opts) {
  check_llama_config(c, opts);
  check_tensor_parallel(opts, c.name);
  const int64_t batch = opts.batch, seq = seq_len_of(c, opts);
  const int64_t d = c.hidden / c.heads, n_rep = c.heads / c.kv_heads;
  // One rank's shares at tensor-parallel degree tp (workloads/tensor_parallel.h): its attention heads and
  // key/value heads (Megatron-LM requires the key/value groups to divide by tp, and so does this: no replication
  // of key/value heads across ranks), and its share of the MLP's intermediate features.
  const int64_t heads = tp_shard(opts, c.heads, "num_attention_heads", c.name);
  const int64_t kv_heads = tp_shard(opts, c.kv_heads, "num_key_value_heads", c.name);
  const int64_t inter = tp_shard(opts, c.intermediate, "intermediate_size", c.name);
  const int64_t vocab = tp_vocab_shard(opts, c.vocab);  // Megatron's vocab-parallel embedding and head
  const bool flash = opts.attention.value_or(Attention::SdpaFlash) == Attention::SdpaFlash;
  const BuildOptions bo = build_options(opts.training);
  ModelBuilder b(c.name, batch, bo);
  TensorId ids = b.input({batch, seq}, DType::I64, "input_ids");
  TensorId h = b.embedding(ids, vocab, c.hidden, "model.embed_tokens");
  const TensorId embed_table = b.graph().ops().back().inputs.at(1);
  // each rank looks up the ids of its vocabulary shard (zeros for the others): the sum over ranks is the lookup
  h = tp_exit(b, h, opts, "model.embed_tokens.tp_all_reduce");
  auto [cos, sin] = b.rotary_embedding(b.input({1, seq}, DType::I64, "position_ids"), d, "model.rotary_emb");
  // Eager only: HF's 4-D causal mask (in the hidden states' dtype, the weights') and the 1/sqrt(d) scale, a
  // Python float that keeps the scores' dtype (here a one-element input of the activations' dtype).
  TensorId mask = kNoTensor, scale = kNoTensor;
  if (!flash) {
    mask = b.input({1, 1, seq, seq}, bo.weights, "causal_mask");
    scale = b.input({1}, bo.activations, "attention_scaling");
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".", a = p + "self_attn.";
    b.begin_block("model.layers." + std::to_string(l));  // a LlamaDecoderLayer
    TensorId x = tp_enter(b, b.rms_norm(h, p + "input_layernorm"), opts, a + "tp_enter");
    TensorId q = b.reshape(b.linear(x, heads * d, c.qkv_bias, a + "q_proj"), {batch, seq, heads, d}, a + "q.view");
    TensorId k =
        b.reshape(b.linear(x, kv_heads * d, c.qkv_bias, a + "k_proj"), {batch, seq, kv_heads, d}, a + "k.view");
    TensorId v = b.linear(x, kv_heads * d, c.qkv_bias, a + "v_proj");
    q = b.rotary(q, cos, sin, a + "rotary.q");
    k = b.rotary(k, cos, sin, a + "rotary.k");
    if (n_rep > 1) k = b.repeat_kv(k, n_rep, false, a + "repeat_kv.k");
    TensorId ctx;
    if (flash) {
      if (n_rep > 1)
        v = b.repeat_kv(b.reshape(v, {batch, seq, kv_heads, d}, a + "v.view"), n_rep, true, a + "repeat_kv.v");
      else  // PyTorch: the transposed view itself, which the flash kernel reads as it is
        v = b.reshape(v, {batch, heads, seq, d}, a + "v.transpose_view");
      ctx = b.flash_attention(q, k, v, true, a + "sdpa");  // (B, S, heads, d): the transpose back is free
    } else {
      // repeat_kv's copy, or (n_rep 1) the contiguous copy torch.matmul makes of V's transposed view.
      v = b.repeat_kv(b.reshape(v, {batch, seq, kv_heads, d}, a + "v.view"), n_rep, true,
                      a + (n_rep > 1 ? "repeat_kv.v" : "v.contiguous"));
      TensorId w = b.matmul(q, k, a + "scores", true);
      w = b.add(b.mul(w, scale, a + "scale"), mask, false, a + "causal_mask");
      w = b.cast(b.softmax_fp32(w, -1, a + "softmax"), b.graph().tensor(q).dtype, a + "softmax.to_q_dtype");
      ctx = b.transpose(b.matmul(w, v, a + "context"), {0, 2, 1, 3}, a + "context.transpose");
    }
    ctx = b.reshape(ctx, {batch, seq, heads * d}, a + "context.view");
    h = b.add(h, tp_exit(b, b.linear(ctx, c.hidden, false, a + "o_proj"), opts, a + "tp_all_reduce"), false,
              p + "attn.residual");
    x = tp_enter(b, b.rms_norm(h, p + "post_attention_layernorm"), opts, p + "mlp.tp_enter");
    TensorId gate = b.silu(b.linear(x, inter, false, p + "mlp.gate_proj"), p + "mlp.act_fn");
    TensorId up = b.linear(x, inter, false, p + "mlp.up_proj");
    TensorId down = tp_exit(b, b.linear(b.mul(gate, up, p + "mlp.gate_up"), c.hidden, false, p + "mlp.down_proj"), opts,
                            p + "mlp.tp_all_reduce");
    h = b.add(h, down, false, p + "mlp.residual");
    b.end_block();
  }
  h = b.rms_norm(h, "model.norm");
  const TensorId last_hidden_state = h;
  h = tp_enter(b, h, opts, "lm_head.tp_enter");  // the head is column-parallel over the vocabulary
  TensorId logits = c.tied_embeddings ? b.linear_with_weight(h, embed_table, false, "lm_head")
                                      : b.linear(h, vocab, false, "lm_head");
  // transformers 5's ForCausalLMLoss; under tensor parallel over vocabulary shards (Megatron's vocab-parallel loss)
  hf_causal_lm_loss(b, logits, ids, last_hidden_state,
                    [&](TensorId fp32_logits) { return tp_vocab_parallel_loss_stats(b, fp32_logits, opts, "loss"); });
  return b.finish();
}

Graph build_llama3_2_1b(const ModelOptions& opts) { return build_llama(llama3_2_1b_config(), opts); }
Graph build_llama3_8b(const ModelOptions& opts) { return build_llama(llama3_8b_config(), opts); }
Graph build_llama2_7b(const ModelOptions& opts) { return build_llama(llama2_7b_config(), opts); }
Graph build_llama2_13b(const ModelOptions& opts) { return build_llama(llama2_13b_config(), opts); }
Graph build_mistral_7b(const ModelOptions& opts) { return build_llama(mistral_7b_config(), opts); }
Graph build_qwen2_5_0_5b(const ModelOptions& opts) { return build_llama(qwen2_5_0_5b_config(), opts); }

}  // namespace dlsim
