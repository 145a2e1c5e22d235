#pragma once
// The transformer builders of the zoo: BERT-base (Hugging Face BertModel with its pooler, trained with a
// masked-LM loss) and GPT-2 small (GPT2LMHeadModel, causal-LM loss). BERT's attention, and GPT-2's with attention
// eager, is built as PyTorch/HF eager runs it, op for op, so that the activations autograd keeps match
// (validate/torch/torch_reference_transformers.py); GPT-2's default is transformers 5's (SDPA, gelu_new written
// out), checked against Hugging Face's recorded step (validate/torch/torch_step_gpt2_table.py).
#include <cstdint>

#include "workloads/graph.h"
#include "workloads/model_options.h"

namespace dlsim {

struct TransformerConfig {
  int64_t vocab = 0;
  int64_t hidden = 0;
  int64_t layers = 0;
  int64_t heads = 0;
  int64_t inner = 0;          // MLP width
  int64_t max_positions = 0;  // the position-embedding table, hence the longest sequence
  double dropout = 0.1;
};

TransformerConfig bert_base_config();    // 30522 vocab, 768 hidden, 12 layers x 12 heads, 3072 MLP, 512 positions
TransformerConfig gpt2_small_config();   // 50257 vocab, 768 hidden, 12 layers x 12 heads, 3072 MLP, 1024 positions

TransformerConfig bert_large_config();   // 30522 vocab, 1024 hidden, 24 layers x 16 heads, 4096 MLP, 512 positions

// What BERT is trained for: masked-LM (the decoder tied to the word embeddings over the whole vocabulary) or
// SQuAD question answering (BertForQuestionAnswering's 2-logit head and its start/end loss).
enum class BertHead : uint8_t { MaskedLM, SquadQA };

// opts.seq_len 0 means 128 (BERT masked-LM), 384 (BERT SQuAD, as run_squad.py's max_seq_length) or 1024
// (GPT-2); longer than max_positions is a ConfigError.
Graph build_bert(const TransformerConfig& c, const ModelOptions& opts, const std::string& name, BertHead head);
Graph build_gpt2(const TransformerConfig& c, const ModelOptions& opts, const std::string& name);

// The zoo entries `bert-base`, `bert-base-squad`, `bert-large-squad` and `gpt2-small` (declared by zoo.cc).
Graph build_bert_base(const ModelOptions& opts);
Graph build_bert_base_squad(const ModelOptions& opts);
Graph build_bert_large_squad(const ModelOptions& opts);
Graph build_gpt2_small(const ModelOptions& opts);

}  // namespace dlsim
