// BERT-base and GPT-2 small as Hugging Face's PyTorch code runs them (modeling_bert / modeling_gpt2); GPT-2 by
// default as transformers 5 runs it (SDPA attention, build_gpt2 below), otherwise eager, as described here.
//
// Per attention block the ops are those autograd records: Q, K, V linears; the head split (a view plus a
// permute, which torch.matmul materialises as a contiguous copy before its bmm: a Transpose here, whose
// output is what the matmul keeps); scores matmul; the 1/sqrt(d) scale (a Mul by a one-element constant,
// which keeps only that constant); the mask (an Add of a non-learnable input: BERT's additive padding mask,
// GPT-2's causal torch.where, neither of which keeps an activation); softmax; dropout; context matmul; the
// head merge (permute + contiguous: a Transpose, then a view); output linear; dropout; residual add;
// layer norm; and the GELU MLP.
// Deliberate differences from HF, none of which changes what the backward keeps by more than a few bytes:
//   - Eager GPT-2's c_attn (one 768x2304 Conv1D split into Q, K and V views) is three 768x768 linears reading the
//     same input (same parameters, MACs, and kept bytes: the split views are copied by matmul). The default
//     (sdpa-flash) GPT-2 builds it as HF does: one linear to 2304 whose output is split into views.
//   - GPT-2's activation is "gelu_new" computed by the fused tanh GELU kernel (HF's gelu_pytorch_tanh).
//   - GPT-2's loss is taken over all S positions (HF shifts the logits by one: S-1 rows).
//   - BERT's loss head is the decoder tied to the word embeddings, without BertForMaskedLM's transform and
//     bias, so the model has exactly BertModel's 109,482,240 parameters. The pooler is built (HF's BertModel
//     runs it) but no loss reads it, so, as in PyTorch, it gets no gradient and the optimizer skips it.
//   - The SQuAD models (bert-base-squad, bert-large-squad) are BertForQuestionAnswering: the encoder and a
//     2-logit qa_outputs head. NVIDIA's DeepLearningExamples BertModel still runs its pooler (unused), as here;
//     Hugging Face's leaves it out (768x768 on B tokens, too small to matter).
// Kernels::Fused (workloads/training.h) builds attention's scale + mask + softmax + dropout as one op and
// the MLP's bias + GELU as one op, as NVIDIA's BERT implementations do.
#include "workloads/transformer_models.h"

#include "common/config_error.h"
#include "workloads/causal_lm_loss.h"
#include "workloads/model_builder.h"

namespace dlsim {
namespace {

int64_t seq_len_or(const ModelOptions& opts, int64_t fallback, const TransformerConfig& c, const std::string& model) {
  if (opts.seq_len < 0) throw ConfigError(model, 0, "seq_len", "sequence length must be positive, got " + std::to_string(opts.seq_len));
  int64_t s = opts.seq_len == 0 ? fallback : opts.seq_len;
  if (s > c.max_positions)
    throw ConfigError(model, 0, "seq_len", "sequence length " + std::to_string(s) + " exceeds the model's " +
                                               std::to_string(c.max_positions) + " position embeddings");
  return s;
}

void check_config(const TransformerConfig& c, const std::string& model) {
  if (c.vocab <= 0 || c.hidden <= 0 || c.layers <= 0 || c.heads <= 0 || c.inner <= 0 || c.max_positions <= 0)
    throw ConfigError(model, 0, "config", "transformer sizes must be positive");
  if (c.hidden % c.heads != 0)
    throw ConfigError(model, 0, "heads", "hidden size " + std::to_string(c.hidden) + " is not divisible by " + std::to_string(c.heads) + " heads");
}

// The weight of the op that just produced `t` (an embedding's table), for tying.
TensorId last_op_weight(const ModelBuilder& b) { return b.graph().ops().back().inputs.at(1); }

// Multi-head self-attention up to (not including) the output projection: (B, S, H) -> (B, S, H).
TensorId self_attention(ModelBuilder& b, const TransformerConfig& c, TensorId x, TensorId mask, TensorId scale,
                        int64_t batch, int64_t seq, const std::string& p, const std::string& q_name,
                        const std::string& k_name, const std::string& v_name) {
  const int64_t d = c.hidden / c.heads;
  auto heads = [&](TensorId t, const std::vector<int64_t>& perm, const std::string& n) {
    return b.transpose(b.reshape(t, {batch, seq, c.heads, d}, n + ".view"), perm, n + ".permute");
  };
  TensorId q = heads(b.linear(x, c.hidden, true, p + q_name), {0, 2, 1, 3}, p + q_name);
  TensorId kt = heads(b.linear(x, c.hidden, true, p + k_name), {0, 2, 3, 1}, p + k_name);
  TensorId v = heads(b.linear(x, c.hidden, true, p + v_name), {0, 2, 1, 3}, p + v_name);
  TensorId scores = b.matmul(q, kt, p + "scores");
  TensorId probs = b.scaled_masked_softmax_dropout(scores, mask, scale, c.dropout, p);
  TensorId ctx = b.matmul(probs, v, p + "context");
  ctx = b.transpose(ctx, {0, 2, 1, 3}, p + "context.permute");
  return b.reshape(ctx, {batch, seq, c.hidden}, p + "context.view");
}

}  // namespace

TransformerConfig bert_base_config() { return {30522, 768, 12, 12, 3072, 512, 0.1}; }
TransformerConfig gpt2_small_config() { return {50257, 768, 12, 12, 3072, 1024, 0.1}; }

Graph build_bert(const TransformerConfig& c, const ModelOptions& opts, const std::string& name, BertHead head) {
  check_config(c, name);
  const int64_t batch = opts.batch, seq = seq_len_or(opts, head == BertHead::MaskedLM ? 128 : 384, c, name);
  ModelBuilder b(name, batch, build_options(opts.training));
  TensorId ids = b.input({batch, seq}, DType::I64, "input_ids");
  TensorId words = b.embedding(ids, c.vocab, c.hidden, "embeddings.word_embeddings");
  TensorId word_table = last_op_weight(b);
  TensorId types = b.embedding(b.input({batch, seq}, DType::I64, "token_type_ids"), 2, c.hidden, "embeddings.token_type_embeddings");
  TensorId pos = b.embedding(b.input({1, seq}, DType::I64, "position_ids"), c.max_positions, c.hidden, "embeddings.position_embeddings");
  TensorId h = b.add(words, types, false, "embeddings.add");
  h = b.add(h, pos, true, "embeddings.add_position");  // HF: embeddings += position_embeddings
  h = b.dropout(b.layer_norm(h, "embeddings.LayerNorm"), c.dropout, "embeddings.dropout");
  // (1 - attention_mask) * finfo.min, broadcast over heads and query positions; not learnable.
  TensorId mask = b.input({batch, 1, 1, seq}, DType::F32, "extended_attention_mask");
  TensorId scale = b.input({1}, DType::F32, "attention_scale");  // 1/sqrt(head size)
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    b.begin_block("encoder.layer." + std::to_string(l));  // a BertLayer: what checkpointing segments
    TensorId ctx = self_attention(b, c, h, mask, scale, batch, seq, p + "attention.self.", "query", "key", "value");
    TensorId a = b.linear(ctx, c.hidden, true, p + "attention.output.dense");
    a = b.dropout(a, c.dropout, p + "attention.output.dropout");
    a = b.layer_norm(b.add(a, h, false, p + "attention.output.residual"), p + "attention.output.LayerNorm");
    TensorId i = b.linear_gelu(a, c.inner, p + "intermediate.dense", p + "intermediate.gelu");
    TensorId o = b.dropout(b.linear(i, c.hidden, true, p + "output.dense"), c.dropout, p + "output.dropout");
    h = b.layer_norm(b.add(o, a, false, p + "output.residual"), p + "output.LayerNorm");
    b.end_block();
  }
  TensorId first = b.select(h, 1, 0, "pooler.first_token");
  b.tanh(b.linear(first, c.hidden, true, "pooler.dense"), "pooler.activation");
  if (head == BertHead::MaskedLM) {
    b.cross_entropy_loss(b.linear_with_weight(h, word_table, false, "cls.predictions.decoder"), "loss");
    return b.finish();
  }
  // SQuAD: qa_outputs, a 2-logit linear per token; start and end logits split off (split + squeeze + contiguous:
  // one copy of the logits, here a transpose to (2, B, S)); the loss is the mean of the start and end cross
  // entropies over the sequence positions, which is one cross entropy over 2B rows of S classes.
  TensorId logits = b.linear(h, 2, true, "qa_outputs");
  TensorId start_end = b.transpose(logits, {2, 0, 1}, "qa_outputs.split");
  b.cross_entropy_loss(start_end, "loss");
  return b.finish();
}

// attention sdpa-flash (the default): GPT-2 as transformers 5 runs it (attn_implementation "sdpa"): c_attn's
// q, k, v head views read by one FlashAttention op (attention dropout inside the kernel, which keeps no mask: it
// regenerates it from its random state), the MLP's gelu_new written out (ModelBuilder::gelu_tanh_formula) and
// ForCausalLMLoss (causal_lm_loss.h). attention eager: the graph of validate/torch/torch_reference_transformers.py
// (transformers 4's eager attention, the fused tanh GELU, the loss over all S positions), which its tests and the
// ONNX export compare with.
Graph build_gpt2(const TransformerConfig& c, const ModelOptions& opts, const std::string& name) {
  check_config(c, name);
  const int64_t batch = opts.batch, seq = seq_len_or(opts, 1024, c, name), d = c.hidden / c.heads;
  const bool flash = opts.attention.value_or(Attention::SdpaFlash) == Attention::SdpaFlash;
  ModelBuilder b(name, batch, build_options(opts.training));
  TensorId ids = b.input({batch, seq}, DType::I64, "input_ids");
  TensorId tokens = b.embedding(ids, c.vocab, c.hidden, "wte");
  TensorId wte = last_op_weight(b);
  TensorId pos = b.embedding(b.input({1, seq}, DType::I64, "position_ids"), c.max_positions, c.hidden, "wpe");
  TensorId h = b.dropout(b.add(tokens, pos, false, "embeddings.add"), c.dropout, "drop");
  // Eager only: torch.where(causal, w, finfo.min) over the lower triangle (the condition is a buffer, not an
  // activation) and the 1/sqrt(d) scale.
  TensorId causal = kNoTensor, scale = kNoTensor;
  if (!flash) {
    causal = b.input({1, 1, seq, seq}, DType::F32, "causal_mask");
    scale = b.input({1}, DType::F32, "attention_scale");
  }
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = "h." + std::to_string(l) + ".";
    b.begin_block("h." + std::to_string(l));  // a GPT2Block
    TensorId x = b.layer_norm(h, p + "ln_1");
    TensorId ctx;
    if (flash) {
      // c_attn is one Conv1D to 3 x hidden (one GEMM, one (B, S, 3H) output), split into q, k and v and each
      // viewed as (B, heads, S, d): views of c_attn's output, which the kernel reads as they are (its storage
      // lives as long as the kernel keeps them; their gradients are cat into one, training_slices.cc).
      const std::vector<TensorId> qkv = b.split(b.linear(x, 3 * c.hidden, true, p + "attn.c_attn"), 3, 2, p + "attn.split");
      auto head_view = [&](TensorId t, const std::string& n) {
        return b.reshape(t, {batch, c.heads, seq, d}, p + "attn." + n + ".transpose_view");
      };
      TensorId q = head_view(qkv[0], "q"), k = head_view(qkv[1], "k"), v = head_view(qkv[2], "v");
      ctx = b.reshape(b.flash_attention(q, k, v, true, p + "attn.sdpa"), {batch, seq, c.hidden}, p + "attn.context.view");
    } else {
      ctx = self_attention(b, c, x, causal, scale, batch, seq, p + "attn.", "c_attn.q", "c_attn.k", "c_attn.v");
    }
    TensorId a = b.dropout(b.linear(ctx, c.hidden, true, p + "attn.c_proj"), c.dropout, p + "attn.resid_dropout");
    h = b.add(a, h, false, p + "attn.residual");
    TensorId m = flash ? b.gelu_tanh_formula(b.linear(b.layer_norm(h, p + "ln_2"), c.inner, true, p + "mlp.c_fc"), p + "mlp.act")
                       : b.linear_gelu(b.layer_norm(h, p + "ln_2"), c.inner, p + "mlp.c_fc", p + "mlp.act");
    m = b.dropout(b.linear(m, c.hidden, true, p + "mlp.c_proj"), c.dropout, p + "mlp.dropout");
    h = b.add(h, m, false, p + "mlp.residual");
    b.end_block();
  }
  h = b.layer_norm(h, "ln_f");
  TensorId logits = b.linear_with_weight(h, wte, false, "lm_head");
  if (flash)
    hf_causal_lm_loss(b, logits, ids, h);
  else
    b.cross_entropy_loss(logits, "loss");
  return b.finish();
}

TransformerConfig bert_large_config() { return {30522, 1024, 24, 16, 4096, 512, 0.1}; }

Graph build_bert_base(const ModelOptions& opts) { return build_bert(bert_base_config(), opts, "bert-base", BertHead::MaskedLM); }
Graph build_bert_base_squad(const ModelOptions& opts) {
  return build_bert(bert_base_config(), opts, "bert-base-squad", BertHead::SquadQA);
}
Graph build_bert_large_squad(const ModelOptions& opts) {
  return build_bert(bert_large_config(), opts, "bert-large-squad", BertHead::SquadQA);
}
Graph build_gpt2_small(const ModelOptions& opts) { return build_gpt2(gpt2_small_config(), opts, "gpt2-small"); }

}  // namespace dlsim
