#include "workloads/op_kind.h"

namespace dlsim {

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Conv2d: return "Conv2d";
    case OpKind::BatchNorm: return "BatchNorm";
    case OpKind::Relu: return "Relu";
    case OpKind::Relu6: return "Relu6";
    case OpKind::MaxPool: return "MaxPool";
    case OpKind::AvgPool: return "AvgPool";
    case OpKind::GlobalAvgPool: return "GlobalAvgPool";
    case OpKind::AdaptiveAvgPool: return "AdaptiveAvgPool";
    case OpKind::Linear: return "Linear";
    case OpKind::MatMul: return "MatMul";
    case OpKind::Add: return "Add";
    case OpKind::Mul: return "Mul";
    case OpKind::Concat: return "Concat";
    case OpKind::Flatten: return "Flatten";
    case OpKind::Reshape: return "Reshape";
    case OpKind::Transpose: return "Transpose";
    case OpKind::Dropout: return "Dropout";
    case OpKind::Pad: return "Pad";
    case OpKind::Softmax: return "Softmax";
    case OpKind::LayerNorm: return "LayerNorm";
    case OpKind::Gelu: return "Gelu";
    case OpKind::Embedding: return "Embedding";
    case OpKind::CrossEntropyLoss: return "CrossEntropyLoss";
    case OpKind::Conv2dBwdData: return "Conv2dBwdData";
    case OpKind::Conv2dBwdFilter: return "Conv2dBwdFilter";
    case OpKind::BatchNormBwd: return "BatchNormBwd";
    case OpKind::ReluBwd: return "ReluBwd";
    case OpKind::MaxPoolBwd: return "MaxPoolBwd";
    case OpKind::AvgPoolBwd: return "AvgPoolBwd";
    case OpKind::LinearBwdData: return "LinearBwdData";
    case OpKind::LinearBwdWeight: return "LinearBwdWeight";
    case OpKind::MatMulBwd: return "MatMulBwd";
    case OpKind::MulBwd: return "MulBwd";
    case OpKind::ConcatBwd: return "ConcatBwd";
    case OpKind::DropoutBwd: return "DropoutBwd";
    case OpKind::PadBwd: return "PadBwd";
    case OpKind::SoftmaxBwd: return "SoftmaxBwd";
    case OpKind::LayerNormBwd: return "LayerNormBwd";
    case OpKind::GeluBwd: return "GeluBwd";
    case OpKind::EmbeddingBwd: return "EmbeddingBwd";
    case OpKind::CrossEntropyLossBwd: return "CrossEntropyLossBwd";
    case OpKind::GradAccumulate: return "GradAccumulate";
    case OpKind::SgdMomentumUpdate: return "SgdMomentumUpdate";
    case OpKind::AdamUpdate: return "AdamUpdate";
    case OpKind::ZeroGrad: return "ZeroGrad";
    case OpKind::Copy: return "Copy";
    case OpKind::Other: return "Other";
    case OpKind::RmsNorm: return "RmsNorm";
    case OpKind::Rotary: return "Rotary";
    case OpKind::RepeatKv: return "RepeatKv";
    case OpKind::Silu: return "Silu";
    case OpKind::FlashAttention: return "FlashAttention";
    case OpKind::RmsNormBwd: return "RmsNormBwd";
    case OpKind::RotaryBwd: return "RotaryBwd";
    case OpKind::RepeatKvBwd: return "RepeatKvBwd";
    case OpKind::SiluBwd: return "SiluBwd";
    case OpKind::FlashAttentionBwd: return "FlashAttentionBwd";
    case OpKind::AllReduce: return "AllReduce";
    case OpKind::AllGather: return "AllGather";
    case OpKind::ReduceScatter: return "ReduceScatter";
    case OpKind::Broadcast: return "Broadcast";
  }
  return "?";
}

bool is_collective(OpKind k) {
  return k == OpKind::AllReduce || k == OpKind::AllGather || k == OpKind::ReduceScatter || k == OpKind::Broadcast;
}

const char* to_string(OtherOp o) {
  switch (o) {
    case OtherOp::None: return "none";
    case OtherOp::Select: return "select";
    case OtherOp::Tanh: return "tanh";
    case OtherOp::Lrn: return "lrn";
    case OtherOp::RotaryEmbedding: return "rotary_embedding";
    case OtherOp::ReduceBroadcast: return "reduce_broadcast";
    case OtherOp::AmpUnscale: return "amp_unscale";
    case OtherOp::StandIn: return "stand_in";
    case OtherOp::Pow: return "pow";
    case OtherOp::Mean: return "mean";
    case OtherOp::Rsqrt: return "rsqrt";
    case OtherOp::NegHalf: return "neg_half";
    case OtherOp::CatHalves: return "cat_halves";
    case OtherOp::Fill: return "fill";
    case OtherOp::Split: return "split";
    case OtherOp::ForeachPass: return "foreach_pass";
  }
  return "?";
}

std::optional<OtherOp> other_op_named(std::string_view name) {
  for (int i = 1; i <= static_cast<int>(kLastOtherOp); ++i)
    if (name == to_string(static_cast<OtherOp>(i))) return static_cast<OtherOp>(i);
  return std::nullopt;
}

}  // namespace dlsim
