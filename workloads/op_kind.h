#pragma once
// What an op computes: its kind, and for an op of kind Other the sub-kind that says which op it is.
#include <cstdint>
#include <optional>
#include <string_view>

namespace dlsim {

// What an op computes. Backward ops are distinct kinds so that a backend can pick the right kernel.
enum class OpKind : uint16_t {
  // forward
  Conv2d, BatchNorm, Relu, Relu6, MaxPool, AvgPool, GlobalAvgPool, AdaptiveAvgPool, Linear, MatMul, Add, Mul,
  Concat, Flatten, Reshape, Transpose, Dropout, Pad, Softmax, LayerNorm, Gelu, Embedding, CrossEntropyLoss,
  // decoder-only LLMs (workloads/llama_models.h): RMSNorm, rotary embedding, grouped-query attention's K/V repeat,
  // SiLU, and FlashAttention (scaled dot-product attention that keeps no scores matrix)
  RmsNorm, Rotary, RepeatKv, Silu, FlashAttention,
  // backward
  Conv2dBwdData, Conv2dBwdFilter, BatchNormBwd, ReluBwd, MaxPoolBwd, AvgPoolBwd, LinearBwdData,
  LinearBwdWeight, MatMulBwd, MulBwd, ConcatBwd, DropoutBwd, PadBwd, SoftmaxBwd, LayerNormBwd, GeluBwd,
  EmbeddingBwd, CrossEntropyLossBwd, GradAccumulate, RmsNormBwd, RotaryBwd, RepeatKvBwd, SiluBwd, FlashAttentionBwd,
  // collectives over the ranks of a data- or tensor-parallel group (hw/collective_op.h): NCCL's kernels, on a
  // communication stream of their own, priced by hw/collective_model.h for the hardware file's interconnect
  AllReduce, AllGather, ReduceScatter, Broadcast,
  // optimizer and others
  SgdMomentumUpdate, AdamUpdate, ZeroGrad, Copy, Other,
};
const char* to_string(OpKind k);
// AllReduce, AllGather, ReduceScatter, Broadcast: NCCL's kernels, which lowering puts on communication streams of
// their own (program/comm_streams.h) and the kernel cost models price from the interconnect (hw/collective_op.h).
bool is_collective(OpKind k);

// The ops of kind Other, which have no OpKind of their own (each serves one or two models, and a backend tells
// them apart by this sub-kind). A backward op of an Other op, and a gradient accumulation that follows one, carries
// its forward op's sub-kind as it carries its attributes (workloads/op_attributes.h).
enum class OtherOp : uint8_t {
  None,             // no sub-kind: every op of another kind
  Select,           // x.select(axis, index), a strided copy (BERT's pooler; ModelBuilder::select)
  Tanh,             // y = tanh(x) (BERT's pooler; ModelBuilder::tanh)
  Lrn,              // cross-channel local response normalisation (SINGA's CIFAR AlexNet, cnn_cifar.cc)
  RotaryEmbedding,  // the rotary embedding's cos and sin tables (the Llama family; ModelBuilder::rotary_embedding)
  ReduceBroadcast,  // an Add's gradient summed down to the shape of an operand it broadcast (training synthesis)
  AmpUnscale,       // GradScaler's unscale and inf/NaN check of every weight gradient (training synthesis, mixed-fp16)
  StandIn,          // a stand-in kernel of the simulator's tests, timed by its attributes (policies/testing/fakes.h)
  Pow,              // y = x ** c for a Python scalar c (attr exponent: gelu_new's cube, RMSNorm's square)
  Mean,             // x.mean(-1, keepdim=True): a reduction over the last axis (LlamaRMSNorm's variance)
  Rsqrt,            // y = 1 / sqrt(x) (LlamaRMSNorm's reciprocal deviation)
  NegHalf,          // -x[..., d/2:]: rotate_half's negated second half, a strided read of half of x (rotary)
  CatHalves,        // cat((-x2, x1), -1): rotate_half's concatenation, x1 read through its slice view (rotary)
  Fill,             // zeros of a gradient's shape: slice_backward's buffer, the slice's gradient copied into it
  Split,            // torch.split(x, size, axis): views of x's consecutive equal slices, no data moved (GPT-2's
                    // c_attn); the training synthesis elides it (workloads/training.cc)
  ForeachPass,      // a recorded torch._foreach_* op (import-torch): multi_tensor_apply's launches over its lists
};
// The sub-kind's name. Kernel signatures and program files write an Other op's sub-kind as the attribute
// `<name>=1` (select=1, lrn=1, ...), the spelling they have always used, so that stored tables and files still read.
const char* to_string(OtherOp o);
// The sub-kind a name spells (not None), or nullopt.
std::optional<OtherOp> other_op_named(std::string_view name);
inline constexpr OtherOp kLastOtherOp = OtherOp::ForeachPass;

}  // namespace dlsim
