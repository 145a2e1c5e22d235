#include "workloads/causal_lm_loss.h"

#include <algorithm>

namespace dlsim {

TensorId hf_causal_lm_loss(ModelBuilder& b, TensorId logits, TensorId input_ids, TensorId last_hidden_state,
                           const std::function<TensorId(TensorId)>& on_fp32_logits) {
  // The last position's label is ignored; its log-probabilities are there all the same (transformers 4 shifted
  // the logits instead, a copy of all but the last position).
  const TensorId model_logits = logits;
  logits = b.cast(logits, DType::F32, "logits.float");
  TensorId labels = b.pad(input_ids, {0, 0, 0, 1}, "labels.pad");  // F.pad(labels, (0, 1), value=-100)
  labels = b.pad(labels, {0, -1, 0, 0}, "shift_labels");            // [..., 1:].contiguous(): a copy (a view at batch 1)
  const TensorId held_by_loss = on_fp32_logits ? on_fp32_logits(logits) : kNoTensor;
  const TensorId loss = b.cross_entropy_loss(logits, "loss", labels);
  // The model's own logits (16-bit under autocast) and the last hidden state stay alive until the loss returns:
  // the forward that called the loss function holds them, and a loop that keeps only .loss frees them then.
  // Inputs of the loss op that no kernel reads: their bytes are not traffic. (In fp32 lm_head keeps its input and
  // the logits are the loss's input anyway.)
  Op& loss_op = b.graph().op(static_cast<OpId>(b.graph().ops().size() - 1));
  for (TensorId held : {model_logits, last_hidden_state, held_by_loss})
    if (held != kNoTensor && std::find(loss_op.inputs.begin(), loss_op.inputs.end(), held) == loss_op.inputs.end()) loss_op.inputs.push_back(held);
  return loss;
}

}  // namespace dlsim
