#pragma once
// transformers 5's causal-LM loss (loss_utils.ForCausalLMLoss), shared by the decoders of the zoo that Hugging
// Face trains with it: the Llama family (llama_models.cc) and GPT-2 as transformers 5 runs it
// (transformer_models.cc).
#include <functional>

#include "workloads/model_builder.h"

namespace dlsim {

// logits.float(); the labels (the input ids) padded with one ignore_index and shifted,
// F.pad(labels, (0, 1))[..., 1:].contiguous(), instead of dropping the logits' last position; cross entropy over
// every position. The model's own logits and `last_hidden_state` are held by the loss op until it returns (the
// forward that called the loss function holds them). `on_fp32_logits`, when given, is called with the fp32 logits
// before the cross entropy and may add ops (tensor parallel's vocab-parallel statistics, workloads/tensor_parallel.h);
// a tensor it returns (not kNoTensor) is held by the loss op too. Returns the loss.
TensorId hf_causal_lm_loss(ModelBuilder& b, TensorId logits, TensorId input_ids, TensorId last_hidden_state,
                           const std::function<TensorId(TensorId)>& on_fp32_logits = {});

}  // namespace dlsim
