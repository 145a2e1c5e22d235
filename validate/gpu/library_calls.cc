#include "validate/gpu/library_calls.h"

#include <sstream>

namespace dlsim {

const char* to_string(KernelLib l) {
  switch (l) {
    case KernelLib::Cudnn: return "cudnn";
    case KernelLib::Cublas: return "cublas";
    case KernelLib::Ours: return "ours";
  }
  return "?";
}

const char* to_string(KernelCall c) {
  switch (c) {
    case KernelCall::ConvForward: return "cudnnConvolutionForward";
    case KernelCall::ConvBackwardData: return "cudnnConvolutionBackwardData";
    case KernelCall::ConvBackwardFilter: return "cudnnConvolutionBackwardFilter";
    case KernelCall::ConvBackwardBias: return "cudnnConvolutionBackwardBias";
    case KernelCall::AddTensor: return "cudnnAddTensor";
    case KernelCall::BatchNormForwardTraining: return "cudnnBatchNormalizationForwardTraining";
    case KernelCall::BatchNormBackward: return "cudnnBatchNormalizationBackward";
    case KernelCall::ActivationForward: return "cudnnActivationForward";
    case KernelCall::ActivationBackward: return "cudnnActivationBackward";
    case KernelCall::PoolingForward: return "cudnnPoolingForward";
    case KernelCall::PoolingBackward: return "cudnnPoolingBackward";
    case KernelCall::SoftmaxForward: return "cudnnSoftmaxForward";
    case KernelCall::SoftmaxBackward: return "cudnnSoftmaxBackward";
    case KernelCall::Gemm: return "cublasGemmEx";
    case KernelCall::GemmStridedBatched: return "cublasGemmStridedBatchedEx";
    case KernelCall::ElementwiseBinary: return "elementwise_binary";
    case KernelCall::ElementwiseUnary: return "elementwise_unary";
    case KernelCall::ElementwiseUnaryBackward: return "elementwise_unary_backward";
    case KernelCall::BiasAdd: return "bias_add";
    case KernelCall::BiasGrad: return "bias_grad";
    case KernelCall::Copy: return "cudaMemcpy2DAsync";
    case KernelCall::Fill: return "fill";
    case KernelCall::LayerNormForward: return "layer_norm_forward";
    case KernelCall::LayerNormBackward: return "layer_norm_backward";
    case KernelCall::EmbeddingForward: return "embedding_forward";
    case KernelCall::EmbeddingBackward: return "embedding_backward";
    case KernelCall::CrossEntropyForward: return "cross_entropy_forward";
    case KernelCall::CrossEntropyBackward: return "cross_entropy_backward";
    case KernelCall::SgdMomentum: return "sgd_momentum_update";
    case KernelCall::Adam: return "adam_update";
    case KernelCall::MemoryBound: return "memory_bound";
    case KernelCall::Pool2dForward: return "pool2d_forward";
    case KernelCall::Pool2dBackward: return "pool2d_backward";
    case KernelCall::LrnForward: return "cudnnLRNCrossChannelForward";
    case KernelCall::LrnBackward: return "cudnnLRNCrossChannelBackward";
    case KernelCall::Gather: return "gather";
    case KernelCall::ReduceBroadcast: return "reduce_broadcast";
    case KernelCall::LayerNormParamGrad: return "layer_norm_param_grad";
  }
  return "?";
}

std::string OpTranslation::describe() const {
  std::ostringstream o;
  auto dims = [&](const std::vector<int64_t>& d) {
    o << '[';
    for (size_t i = 0; i < d.size(); ++i) o << (i ? "," : "") << d[i];
    o << ']';
  };
  o << "op " << op << ' ' << to_string(lib) << ' ' << to_string(dtype) << ':';
  for (const KernelStep& s : steps) {
    o << ' ' << to_string(s.call);
    if (s.call == KernelCall::Gemm || s.call == KernelCall::GemmStridedBatched)
      o << "(m=" << s.gemm.m << ",n=" << s.gemm.n << ",k=" << s.gemm.k << (s.gemm.trans_a ? ",At" : "")
        << (s.gemm.trans_b ? ",Bt" : "") << (s.gemm.batch > 1 ? ",batch=" + std::to_string(s.gemm.batch) : "") << ")";
  }
  if (!x_dims.empty()) o << " x", dims(x_dims);
  if (!y_dims.empty()) o << " y", dims(y_dims);
  if (needs_workspace)
    o << " conv k=" << conv.k << " r=" << conv.r << " s=" << conv.s << " stride=" << conv.stride_h << "x"
      << conv.stride_w << " pad=" << conv.pad_h << "x" << conv.pad_w << " groups=" << conv.groups
      << (conv.channels_last ? " nhwc" : "") << (dtype == DType::F32 && !conv.tf32 ? " no-tf32" : "");
  if (pool.ceil_mode) o << " ceil_mode";
  if (pool.adaptive) o << " adaptive";
  return o.str();
}

}  // namespace dlsim
