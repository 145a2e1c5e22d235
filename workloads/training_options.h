#pragma once
// The choices a training setup makes, as people set them in PyTorch: the optimizer, the numerics (precision, TF32),
// the memory format of image tensors and whether fused kernels run. Apart from training.h so that the passes that
// read them (memory_format.h, model_builder.h) need not include the synthesis that calls them.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace dlsim {

// AdamW (torch.optim.AdamW, decoupled weight decay): Adam's state and traffic plus the parameter's decay,
// p.mul_(1 - lr * weight_decay), before the step.
enum class Optimizer : uint8_t { SgdMomentum, Adam, AdamW };

// How the numbers are held, as people set it in PyTorch:
//   FP32       everything fp32;
//   MixedFP16  torch.cuda.amp with float16: autocast's fp16 activations, fp32 master weights, loss scaling
//              (GradScaler: the loss multiplied by the scale, the gradients unscaled and checked before the step);
//   MixedBF16  the same with bfloat16 and no loss scaling (bf16 has fp32's exponent range);
//   BF16       the model itself in bfloat16 (model.to(torch.bfloat16)): weights, gradients, optimizer state and
//              every activation, no autocast.
enum class Precision : uint8_t { FP32, MixedFP16, MixedBF16, BF16 };
// Whether fp32 convolutions and matrix products may use TF32 tensor cores (torch.backends.cudnn.allow_tf32,
// torch.backends.cuda.matmul.allow_tf32): Conv is PyTorch's default since 1.12 (cuDNN yes, cuBLAS no); All is
// what NVIDIA's containers and TensorFlow set. The GPU decides whether TF32 exists (hw/math_path.h).
enum class Tf32 : uint8_t { Off, Conv, All };
// Where the channels of an image tensor sit: NCHW (PyTorch's default) or NHWC (channels_last). On tensor cores
// cuDNN's kernels are NHWC, so an NCHW 16-bit convolution runs between layout transposes (workloads/memory_format.h).
enum class MemoryFormat : uint8_t { NCHW, NHWC };
// Eager: one kernel per PyTorch op. Fused: the fusions NVIDIA's DeepLearningExamples, apex and XLA use, each one
// op with the arithmetic of the ops it replaces:
//   batch norm + ReLU       ModelBuilder::relu after a batch_norm (attr fused_relu on the BatchNorm)
//   bias + GELU             ModelBuilder::linear_gelu (attr fused_bias on the Gelu)
//   scale+mask+softmax+dropout  ModelBuilder::scaled_masked_softmax_dropout (attr fused_mask_dropout)
//   the optimizer step      one multi-tensor op over every parameter (training_optimizer.cc; attr multi_tensor)
//   LlamaRMSNorm            one RmsNorm op (apex's FusedRMSNorm) instead of its 6-8 kernels (model_builder_llama.cc)
//   apply_rotary_pos_emb    one Rotary op per q and k instead of its 5 kernels (11 backward) (model_builder_llama.cc)
// Layer norm is one kernel each way in both (PyTorch's native_layer_norm is already fused).
enum class Kernels : uint8_t { Eager, Fused };
// How an eager step (Kernels::Eager) runs Adam's and AdamW's update of each parameter (training_optimizer.cc):
//   Foreach       torch.optim's default on a GPU since PyTorch 2.0 (_multi_tensor_adam): eight multi-tensor passes
//                 (Adam seven) that read 12 (11) and write 8 (7) tensors of the parameter's size, with a sqrt
//                 temporary per parameter; the update op carries attr foreach.
//   PerParameter  one fused kernel per parameter that reads the weight, its gradient and both moments once and
//                 writes the weight and moments once (4 reads, 3 writes), no temporary: what the GPU harness
//                 (dlsim-cuda's Adam kernel) runs for each update op, so what the plans `dlsim validate` writes are.
// The two are different kernels: a correction measured on one (roofline.op_class_scale) is not the other's.
enum class EagerAdam : uint8_t { Foreach, PerParameter };

const char* to_string(Optimizer o);  // "sgd-momentum", "adam", "adamw"
const char* to_string(Precision p);  // "fp32", "mixed-fp16", "mixed-bf16", "bf16"
const char* to_string(Tf32 t);       // "off", "conv", "all"
const char* to_string(MemoryFormat f);  // "nchw", "nhwc"
const char* to_string(Kernels k);    // "eager", "fused"

// Every value of each choice, in the order errors and `dlsim list` name them.
inline constexpr std::array kOptimizers = {Optimizer::SgdMomentum, Optimizer::Adam, Optimizer::AdamW};
inline constexpr std::array kPrecisions = {Precision::FP32, Precision::MixedFP16, Precision::MixedBF16, Precision::BF16};
inline constexpr std::array kTf32Modes = {Tf32::Off, Tf32::Conv, Tf32::All};
inline constexpr std::array kMemoryFormats = {MemoryFormat::NCHW, MemoryFormat::NHWC};
inline constexpr std::array kKernelChoices = {Kernels::Eager, Kernels::Fused};

// The value whose to_string is `name`, or nullopt; choice_names lists them ("fp32, mixed-fp16, ...").
template <class E, size_t N>
std::optional<E> choice_named(const std::string& name, const std::array<E, N>& values) {
  for (E e : values)
    if (name == to_string(e)) return e;
  return std::nullopt;
}
template <class E, size_t N>
std::string choice_names(const std::array<E, N>& values) {
  std::string s;
  for (E e : values) s += (s.empty() ? "" : ", ") + std::string(to_string(e));
  return s;
}

struct TrainingOptions {
  Optimizer optimizer = Optimizer::SgdMomentum;
  Precision precision = Precision::FP32;
  Tf32 tf32 = Tf32::Conv;
  MemoryFormat memory_format = MemoryFormat::NCHW;
  Kernels kernels = Kernels::Eager;
  EagerAdam eager_adam = EagerAdam::Foreach;
  // SGD's L2 weight decay (torch.optim.SGD's weight_decay; 0, PyTorch's default: none). Only whether it is 0
  // matters here: torch.optim's foreach SGD then adds the gradients' decay out of place before the momentum,
  // _foreach_add(grads, params, alpha=weight_decay): one more pass (three lists) and a new tensor per parameter,
  // alive to the end of the step (training_optimizer.cc). A fused SGD decays inside its one kernel.
  double weight_decay = 0;
  // cuDNN workspace per convolution, bytes; the cost of the fastest algorithm is modelled as this fraction
  // of the op's input+output bytes, capped (workloads/training.cc documents the choice).
  bool conv_workspace = true;
  // Whether cross entropy's backward holds nll_loss_backward's gradient of the log-probabilities as its workspace
  // (PyTorch's two kernels, training_backward.cc). false: one fused kernel from the log-probabilities to the
  // logits' gradient, no middle tensor: what the GPU harness (dlsim-cuda's cross_entropy_backward) runs, so what
  // the plans `dlsim validate` writes are.
  bool nll_grad_workspace = true;
};

}  // namespace dlsim
