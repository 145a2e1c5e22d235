#include "validate/gpu/cuda/op_runner.h"

#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/kernels.h"

namespace dlsim::cuda {

namespace {

cudnnDataType_t dnn_type(DType t) {
  switch (t) {
    case DType::BF16: return CUDNN_DATA_BFLOAT16;
    case DType::F16: return CUDNN_DATA_HALF;
    default: return CUDNN_DATA_FLOAT;
  }
}
cudaDataType_t blas_type(DType t) {
  switch (t) {
    case DType::BF16: return CUDA_R_16BF;
    case DType::F16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}
int ci(int64_t v) { return static_cast<int>(v); }

NdDev nd(const NdMap& m) {
  NdDev d;
  d.rank = static_cast<int>(m.dims.size());
  for (size_t i = 0; i < m.dims.size() && i < static_cast<size_t>(kNdMax); ++i)
    d.dims[i] = m.dims[i], d.strides[i] = m.strides[i], d.shift[i] = m.shift[i], d.bound[i] = m.bound[i];
  return d;
}

PoolDev pool_dev(const PoolShape& s) {
  PoolDev p;
  p.n = s.n, p.c = s.c, p.h = s.h, p.w = s.w, p.p = s.p, p.q = s.q;
  p.win_h = s.win_h, p.win_w = s.win_w, p.pad_h = s.pad_h, p.pad_w = s.pad_w, p.stride_h = s.stride_h,
  p.stride_w = s.stride_w;
  p.mode = s.max ? 0 : s.adaptive ? 3 : s.include_pad ? 1 : 2;
  return p;
}

// Our kernels' function codes (kernels.h).
int unary_code(Pointwise f, const std::string& ctx) {
  switch (f) {
    case Pointwise::Cast: return 0;
    case Pointwise::Gelu: return 1;
    case Pointwise::GeluTanh: return 2;
    case Pointwise::Tanh: return 3;
    case Pointwise::Dropout: return 4;
    default: throw CudaError("no element-wise kernel for this function (" + ctx + ")");
  }
}

}  // namespace

OpRunner::OpRunner(const Graph& g, OpTranslation plan, cudnnHandle_t dnn, cublasHandle_t blas,
                   GraphConvCache* conv_plans)
    : g_(g), translation_(std::move(plan)), dnn_(dnn), blas_(blas), conv_plans_(conv_plans) {
  ctx_ = "op " + std::to_string(translation_.op) + " '" + g.op(translation_.op).name + "'";
  if (translation_.lib != KernelLib::Cudnn) return;
  const cudnnDataType_t dt = dnn_type(translation_.dtype);
  // A channels_last convolution's tensors and filters are NHWC in memory (its bias add and bias gradient too).
  const cudnnTensorFormat_t format =
      translation_.needs_workspace && translation_.conv.channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  auto make4 = [&](cudnnTensorDescriptor_t& d, const std::vector<int64_t>& s) {
    DLSIM_CK(cudnnCreateTensorDescriptor(&d), ctx_);
    DLSIM_CK(cudnnSetTensor4dDescriptor(d, format, dt, ci(s[0]), ci(s[1]), ci(s[2]), ci(s[3])), ctx_);
  };
  make4(x_, translation_.x_dims);
  make4(y_, translation_.y_dims);
  const OpKind k = g.op(translation_.op).kind;
  const KernelCall first = translation_.steps.front().call;
  if (translation_.needs_workspace) {
    const ConvShape& c = translation_.conv;
    DLSIM_CK(cudnnCreateFilterDescriptor(&w_), ctx_);
    DLSIM_CK(cudnnSetFilter4dDescriptor(w_, dt, format, ci(c.k), ci(c.c / c.groups), ci(c.r), ci(c.s)), ctx_);
    DLSIM_CK(cudnnCreateConvolutionDescriptor(&conv_), ctx_);
    DLSIM_CK(cudnnSetConvolution2dDescriptor(conv_, ci(c.pad_h), ci(c.pad_w), ci(c.stride_h), ci(c.stride_w),
                                             ci(c.dil_h), ci(c.dil_w), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT), ctx_);
    DLSIM_CK(cudnnSetConvolutionGroupCount(conv_, ci(c.groups)), ctx_);
    // fp32: DEFAULT_MATH lets cuDNN use TF32 tensor cores (PyTorch's cudnn.allow_tf32), FMA_MATH keeps it off.
    const cudnnMathType_t math = translation_.dtype != DType::F32 ? CUDNN_TENSOR_OP_MATH
                                 : c.tf32                         ? CUDNN_DEFAULT_MATH
                                                                  : CUDNN_FMA_MATH;
    DLSIM_CK(cudnnSetConvolutionMathType(conv_, math), ctx_);
    if (c.bias) make4(aux_, {1, c.k, 1, 1});
  } else if (first == KernelCall::BatchNormForwardTraining || first == KernelCall::BatchNormBackward) {
    DLSIM_CK(cudnnCreateTensorDescriptor(&aux_), ctx_);
    DLSIM_CK(cudnnDeriveBNTensorDescriptor(aux_, x_, CUDNN_BATCHNORM_SPATIAL), ctx_);
  } else if (first == KernelCall::ActivationForward || first == KernelCall::ActivationBackward) {
    DLSIM_CK(cudnnCreateActivationDescriptor(&act_), ctx_);
    const bool six = translation_.steps.front().fn == Pointwise::Relu6;
    DLSIM_CK(cudnnSetActivationDescriptor(act_, six ? CUDNN_ACTIVATION_CLIPPED_RELU : CUDNN_ACTIVATION_RELU,
                                          CUDNN_NOT_PROPAGATE_NAN, six ? 6.0 : 0.0), ctx_);
  } else if (first == KernelCall::PoolingForward || first == KernelCall::PoolingBackward) {
    const PoolShape& p = translation_.pool;
    DLSIM_CK(cudnnCreatePoolingDescriptor(&pool_), ctx_);
    const cudnnPoolingMode_t mode = p.max ? CUDNN_POOLING_MAX
                                    : p.include_pad ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                                                    : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
    DLSIM_CK(cudnnSetPooling2dDescriptor(pool_, mode, CUDNN_NOT_PROPAGATE_NAN, ci(p.win_h), ci(p.win_w), ci(p.pad_h),
                                         ci(p.pad_w), ci(p.stride_h), ci(p.stride_w)), ctx_);
  } else if (first == KernelCall::LrnForward || first == KernelCall::LrnBackward) {
    // PyTorch's LocalResponseNorm defaults (alpha 1e-4, beta 0.75, k 1): the graph gives only the size.
    DLSIM_CK(cudnnCreateLRNDescriptor(&lrn_), ctx_);
    DLSIM_CK(cudnnSetLRNDescriptor(lrn_, static_cast<unsigned>(translation_.lrn_size), 1e-4, 0.75, 1.0), ctx_);
  }
  (void)k;
}

OpRunner::~OpRunner() {
  // Destruction cannot throw; a failure here would only leak a descriptor.
  if (x_) cudnnDestroyTensorDescriptor(x_);
  if (y_) cudnnDestroyTensorDescriptor(y_);
  if (aux_) cudnnDestroyTensorDescriptor(aux_);
  if (w_) cudnnDestroyFilterDescriptor(w_);
  if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  if (act_) cudnnDestroyActivationDescriptor(act_);
  if (pool_) cudnnDestroyPoolingDescriptor(pool_);
  if (lrn_) cudnnDestroyLRNDescriptor(lrn_);
}

void OpRunner::prepare(uint64_t limit) {
  if (!translation_.needs_workspace) return;
  const KernelCall call = translation_.steps.front().call;
  if (conv_plans_) {  // the graph API: the convolution is the translation's first step
    const ConvGraphSpec spec = conv_graph_spec(translation_, 0);
    graph_ = conv_plans_->get(spec, limit, ctx_);
    graph_operands_ = conv_operands(spec.pass);
    ws_bytes_ = graph_->workspace_bytes();
    algo_name_ = std::string(to_string(spec.pass)) + ":" + graph_->engine();
    return;
  }
  constexpr int kMax = 16;
  int found = 0;
  auto pick = [&](const auto* perf, const char* what) {
    for (int i = 0; i < found; ++i)
      candidates_.push_back({static_cast<int>(perf[i].algo), static_cast<int>(perf[i].status), perf[i].memory});
    for (int i = 0; i < found; ++i)
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= limit) {
        algo_ = static_cast<int>(perf[i].algo);
        ws_bytes_ = perf[i].memory;
        algo_name_ = std::string(what) + "#" + std::to_string(algo_);
        return;
      }
    throw CudaError(std::string("no cuDNN ") + what + " algorithm fits a workspace of " + std::to_string(limit) +
                    " bytes (" + ctx_ + ")");
  };
  if (call == KernelCall::ConvForward) {
    cudnnConvolutionFwdAlgoPerf_t perf[kMax];
    DLSIM_CK(cudnnGetConvolutionForwardAlgorithm_v7(dnn_, x_, w_, conv_, y_, kMax, &found, perf), ctx_);
    pick(perf, "fwd");
  } else if (call == KernelCall::ConvBackwardData) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kMax];
    DLSIM_CK(cudnnGetConvolutionBackwardDataAlgorithm_v7(dnn_, w_, y_, conv_, x_, kMax, &found, perf), ctx_);
    pick(perf, "bwd_data");
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[kMax];
    DLSIM_CK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(dnn_, x_, y_, conv_, w_, kMax, &found, perf), ctx_);
    pick(perf, "bwd_filter");
  }
}

void OpRunner::launch(cudaStream_t s, const Resolve& ptr, void* ws) {
  if (translation_.lib == KernelLib::Cudnn) DLSIM_CK(cudnnSetStream(dnn_, s), ctx_);
  if (translation_.lib == KernelLib::Cublas) DLSIM_CK(cublasSetStream(blas_, s), ctx_);
  for (size_t i = 0; i < translation_.steps.size(); ++i) {
    const KernelStep& st = translation_.steps[i];
    auto in = [&](size_t slot) { return ptr(i, false, slot); };
    auto out = [&](size_t slot) { return ptr(i, true, slot); };
    auto inf = [&](size_t slot) { return static_cast<float*>(in(slot)); };
    auto outf = [&](size_t slot) { return static_cast<float*>(out(slot)); };
    // Our kernels' operands with their own element types (autocast mixes fp32 and bf16).
    auto bin = [&](size_t slot) { return Buf{in(slot), st.args.in.at(slot).dtype == DType::BF16}; };
    auto bout = [&](size_t slot) { return Buf{out(slot), st.args.out.at(slot).dtype == DType::BF16}; };
    const float a = static_cast<float>(st.alpha), b = static_cast<float>(st.beta), one = 1.f;
    if (graph_ && i == 0) {  // the convolution, through its execution plan
      auto operand = [&](const ConvOperand& o) { return ptr(i, o.out, o.slot); };
      graph_->execute(dnn_, operand(graph_operands_[0]), operand(graph_operands_[1]), operand(graph_operands_[2]), ws,
                      ctx_);
      continue;
    }
    switch (st.call) {
      case KernelCall::ConvForward:
        DLSIM_CK(cudnnConvolutionForward(dnn_, &a, x_, in(0), w_, in(1), conv_,
                                         static_cast<cudnnConvolutionFwdAlgo_t>(algo_), ws, ws_bytes_, &b, y_, out(0)), ctx_);
        break;
      case KernelCall::ConvBackwardData:
        DLSIM_CK(cudnnConvolutionBackwardData(dnn_, &a, w_, in(1), y_, in(0), conv_,
                                              static_cast<cudnnConvolutionBwdDataAlgo_t>(algo_), ws, ws_bytes_, &b,
                                              x_, out(0)), ctx_);
        break;
      case KernelCall::ConvBackwardFilter:
        DLSIM_CK(cudnnConvolutionBackwardFilter(dnn_, &a, x_, in(0), y_, in(1), conv_,
                                                static_cast<cudnnConvolutionBwdFilterAlgo_t>(algo_), ws, ws_bytes_, &b,
                                                w_, out(0)), ctx_);
        break;
      case KernelCall::ConvBackwardBias:
        DLSIM_CK(cudnnConvolutionBackwardBias(dnn_, &a, y_, in(0), &b, aux_, out(0)), ctx_);
        break;
      case KernelCall::AddTensor:
        DLSIM_CK(cudnnAddTensor(dnn_, &one, aux_, in(0), &one, y_, out(0)), ctx_);
        break;
      case KernelCall::BatchNormForwardTraining:
        DLSIM_CK(cudnnBatchNormalizationForwardTraining(dnn_, CUDNN_BATCHNORM_SPATIAL, &a, &b, x_, in(0), y_, out(0),
                                                        aux_, in(1), in(2), 0.1, in(3), in(4), 1e-5, out(1), out(2)), ctx_);
        break;
      case KernelCall::BatchNormBackward:
        DLSIM_CK(cudnnBatchNormalizationBackward(dnn_, CUDNN_BATCHNORM_SPATIAL, &a, &b, &a, &b, x_, in(0), y_, in(1),
                                                 x_, out(0), aux_, in(2), out(1), out(2), 1e-5, in(3), in(4)), ctx_);
        break;
      case KernelCall::ActivationForward:
        DLSIM_CK(cudnnActivationForward(dnn_, act_, &a, x_, in(0), &b, y_, out(0)), ctx_);
        break;
      case KernelCall::ActivationBackward:  // in: saved (y for ReLU), dy
        DLSIM_CK(cudnnActivationBackward(dnn_, act_, &a, y_, in(0), y_, in(1), x_, in(0), &b, x_, out(0)), ctx_);
        break;
      case KernelCall::PoolingForward:
        DLSIM_CK(cudnnPoolingForward(dnn_, pool_, &a, x_, in(0), &b, y_, out(0)), ctx_);
        break;
      case KernelCall::PoolingBackward:  // in: y, dy, x
        DLSIM_CK(cudnnPoolingBackward(dnn_, pool_, &a, y_, in(0), y_, in(1), x_, in(2), &b, x_, out(0)), ctx_);
        break;
      case KernelCall::SoftmaxForward:
        DLSIM_CK(cudnnSoftmaxForward(dnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &a, x_, in(0), &b, y_,
                                     out(0)), ctx_);
        break;
      case KernelCall::SoftmaxBackward:  // in: y, dy
        DLSIM_CK(cudnnSoftmaxBackward(dnn_, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &a, y_, in(0), y_, in(1),
                                      &b, x_, out(0)), ctx_);
        break;
      case KernelCall::Gemm: case KernelCall::GemmStridedBatched: {
        // Row-major C[m,n] = op(A) op(B) computed as column-major C^T = op(B)^T op(A)^T (see GemmShape).
        const GemmShape& gm = st.gemm;
        const cublasOperation_t opa = gm.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
        const cublasOperation_t opb = gm.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
        const int lda = ci(gm.trans_a ? gm.m : gm.k), ldb = ci(gm.trans_b ? gm.k : gm.n), ldc = ci(gm.n);
        const cudaDataType_t t = blas_type(translation_.dtype);
        if (st.call == KernelCall::Gemm) {
          DLSIM_CK(cublasGemmEx(blas_, opb, opa, ci(gm.n), ci(gm.m), ci(gm.k), &a, in(1), t, ldb, in(0), t, lda, &b,
                                out(0), t, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), ctx_);
        } else {
          DLSIM_CK(cublasGemmStridedBatchedEx(blas_, opb, opa, ci(gm.n), ci(gm.m), ci(gm.k), &a, in(1), t, ldb,
                                              gm.k * gm.n, in(0), t, lda, gm.m * gm.k, &b, out(0), t, ldc, gm.m * gm.n,
                                              ci(gm.batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT), ctx_);
        }
        break;
      }
      case KernelCall::ElementwiseBinary: {
        if (st.fn != Pointwise::Add && st.fn != Pointwise::Mul)
          throw CudaError("elementwise_binary supports add and mul only (" + ctx_ + ")");
        binary(st.fn == Pointwise::Add ? 0 : 1, bin(0), nd(st.map_a), bin(1), nd(st.map_b), bout(0), st.elements, s,
               ctx_);
        break;
      }
      case KernelCall::ElementwiseUnary:  // dropout: out = {y, mask}
        unary(unary_code(st.fn, ctx_), bin(0), bout(0), st.args.out.size() > 1 ? out(1) : nullptr, st.elements, s,
              ctx_);
        break;
      case KernelCall::ElementwiseUnaryBackward:  // in: saved (x, y or the mask), dy
        unary_backward(unary_code(st.fn, ctx_), bin(0), bin(1), bout(0), st.elements, s, ctx_);
        break;
      case KernelCall::BiasAdd: bias_add(bin(0), bout(0), st.rows, st.cols, s, ctx_); break;
      case KernelCall::BiasGrad: bias_grad(bin(0), bout(0), st.rows, st.cols, s, ctx_); break;
      case KernelCall::Copy:
        DLSIM_CK(cudaMemcpy2DAsync(static_cast<char*>(out(0)) + st.dst_offset, static_cast<size_t>(st.dst_pitch),
                                   static_cast<char*>(in(0)) + st.src_offset, static_cast<size_t>(st.src_pitch),
                                   static_cast<size_t>(st.cols), static_cast<size_t>(st.rows),
                                   cudaMemcpyDeviceToDevice, s), ctx_);
        break;
      case KernelCall::Fill:
        DLSIM_CK(cudaMemsetAsync(out(0), 0, static_cast<size_t>(st.elements), s), ctx_);
        break;
      case KernelCall::Gather: gather(bin(0), nd(st.map_a), bout(0), st.elements, s, ctx_); break;
      case KernelCall::ReduceBroadcast: reduce_broadcast(bin(0), nd(st.map_a), bout(0), st.elements, s, ctx_); break;
      case KernelCall::LayerNormForward:  // in: x, gamma, beta; out: y, mean, rstd
        layer_norm(bin(0), inf(1), inf(2), bout(0), outf(1), outf(2), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::LayerNormBackward:  // in: x, dy, gamma, mean, rstd; out: dx
        layer_norm_backward(bin(0), bin(1), inf(2), inf(3), inf(4), bout(0), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::LayerNormParamGrad:  // in: x, dy, mean, rstd; out: dgamma, dbeta
        layer_norm_param_grad(bin(0), bin(1), inf(2), inf(3), outf(0), outf(1), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::EmbeddingForward:
        embedding(static_cast<int64_t*>(in(0)), inf(1), bout(0), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::EmbeddingBackward:
        embedding_backward(static_cast<int64_t*>(in(0)), bin(1), outf(0), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::CrossEntropyForward:  // in: logits, targets; out: loss, log_probs
        DLSIM_CK(cudaMemsetAsync(out(0), 0, sizeof(float), s), ctx_);
        cross_entropy(bin(0), static_cast<int64_t*>(in(1)), outf(0), outf(1), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::CrossEntropyBackward:  // in: log_probs, targets; out: dlogits
        cross_entropy_backward(inf(0), static_cast<int64_t*>(in(1)), bout(0), st.rows, st.cols, s, ctx_);
        break;
      case KernelCall::Pool2dForward:  // in: x; out: y, (indices)
        pool2d(pool_dev(translation_.pool), bin(0), bout(0), st.args.out.size() > 1 ? static_cast<int64_t*>(out(1)) : nullptr,
               s, ctx_);
        break;
      case KernelCall::Pool2dBackward:  // in: dy, (indices); out: dx
        pool2d_backward(pool_dev(translation_.pool), bin(0), st.args.in.size() > 1 ? static_cast<int64_t*>(in(1)) : nullptr,
                        bout(0), s, ctx_);
        break;
      case KernelCall::LrnForward:
        DLSIM_CK(cudnnLRNCrossChannelForward(dnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &a, x_, in(0), &b, y_, out(0)),
                 ctx_);
        break;
      case KernelCall::LrnBackward:  // in: y, dy, x
        DLSIM_CK(cudnnLRNCrossChannelBackward(dnn_, lrn_, CUDNN_LRN_CROSS_CHANNEL_DIM1, &a, y_, in(0), y_, in(1), x_,
                                              in(2), &b, x_, out(0)), ctx_);
        break;
      case KernelCall::SgdMomentum: sgd_momentum(inf(0), inf(1), inf(2), st.elements, s, ctx_); break;
      case KernelCall::Adam: adam(inf(0), inf(1), inf(2), inf(3), st.elements, s, ctx_); break;
      case KernelCall::MemoryBound:
        memory_bound(st.args.in.empty() ? nullptr : in(0),
                     st.args.in.empty() ? 0 : static_cast<int64_t>(st.args.in[0].bytes),
                     st.args.out.empty() ? nullptr : out(0),
                     st.args.out.empty() ? 0 : static_cast<int64_t>(st.args.out[0].bytes), s, ctx_);
        break;
    }
  }
}

}  // namespace dlsim::cuda
