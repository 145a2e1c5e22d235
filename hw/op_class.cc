#include "hw/op_class.h"

namespace dlsim {

const char* to_string(OpClass c) {
  switch (c) {
    case OpClass::ConvFwd: return "conv_fwd";
    case OpClass::ConvDgrad: return "conv_dgrad";
    case OpClass::ConvWgrad: return "conv_wgrad";
    case OpClass::Gemm: return "gemm";
    case OpClass::Elementwise: return "elementwise";
    case OpClass::Normalization: return "normalization";
    case OpClass::Reduction: return "reduction";
    case OpClass::Optimizer: return "optimizer";
  }
  return "?";
}

const std::vector<OpClass>& compute_classes() {
  static const std::vector<OpClass> v = {OpClass::ConvFwd, OpClass::ConvDgrad, OpClass::ConvWgrad, OpClass::Gemm};
  return v;
}

const std::vector<OpClass>& memory_classes() {
  static const std::vector<OpClass> v = {OpClass::Elementwise, OpClass::Normalization, OpClass::Reduction,
                                         OpClass::Optimizer};
  return v;
}

OpClass op_class(const Op& op) {
  switch (op.kind) {
    case OpKind::Conv2d: return OpClass::ConvFwd;
    case OpKind::Conv2dBwdData: return OpClass::ConvDgrad;
    case OpKind::Conv2dBwdFilter: return OpClass::ConvWgrad;
    case OpKind::Linear:
    case OpKind::LinearBwdData:
    case OpKind::LinearBwdWeight:
    case OpKind::MatMul:
    case OpKind::MatMulBwd:
    case OpKind::FlashAttention:     // tiled matrix products on tensor cores (its softmax hides under them)
    case OpKind::FlashAttentionBwd:
      return OpClass::Gemm;
    case OpKind::RmsNorm:
    case OpKind::RmsNormBwd:
    case OpKind::BatchNorm:
    case OpKind::BatchNormBwd:
    case OpKind::LayerNorm:
    case OpKind::LayerNormBwd:
      return OpClass::Normalization;
    case OpKind::MaxPool:
    case OpKind::AvgPool:
    case OpKind::GlobalAvgPool:
    case OpKind::AdaptiveAvgPool:
    case OpKind::MaxPoolBwd:
    case OpKind::AvgPoolBwd:
    case OpKind::Softmax:
    case OpKind::SoftmaxBwd:
    case OpKind::CrossEntropyLoss:
    case OpKind::CrossEntropyLossBwd:
    case OpKind::Embedding:
    case OpKind::EmbeddingBwd:
    case OpKind::RepeatKvBwd:  // the sum over the repeated heads
      return OpClass::Reduction;
    case OpKind::SgdMomentumUpdate:
    case OpKind::AdamUpdate:
      return OpClass::Optimizer;
    case OpKind::Other:
      if (op.other == OtherOp::ReduceBroadcast) return OpClass::Reduction;
      if (op.other == OtherOp::Mean && op.forward_op < 0) return OpClass::Reduction;  // its backward: a division
      if (op.other == OtherOp::AmpUnscale) return OpClass::Optimizer;
      return OpClass::Elementwise;
    default:
      return OpClass::Elementwise;
  }
}

}  // namespace dlsim
