#pragma once
// One op on the real GPU: cuDNN descriptors and convolution algorithms prepared once (prepare), then the
// OpTranslation's steps issued on a stream (launch). A convolution runs through cuDNN's graph API when the
// runner is given a plan cache (an execution plan from validate/gpu/cuda/cudnn_graph_conv.h), else through the
// legacy cudnnConvolution* calls. Buffers are resolved by the caller: `ptr(arg)` gives the
// device address of a tensor (or of its side buffer when the graph does not hold that role).
#include <cublas_v2.h>
#include <cudnn.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "validate/gpu/cuda/cudnn_graph_conv.h"
#include "validate/gpu/op_translation.h"

namespace dlsim::cuda {

class OpRunner {
 public:
  // `conv_plans`: the graph API's plan cache, or null for the legacy convolution calls.
  OpRunner(const Graph& g, OpTranslation plan, cudnnHandle_t dnn, cublasHandle_t blas,
           GraphConvCache* conv_plans = nullptr);
  ~OpRunner();
  OpRunner(const OpRunner&) = delete;
  OpRunner& operator=(const OpRunner&) = delete;

  // Chooses the convolution algorithm (legacy) or engine (graph API) as PyTorch does without benchmarking: the
  // first of cuDNN's heuristic list whose workspace fits `workspace_limit` (the graph's workspace tensor, or no
  // limit when the op has none).
  void prepare(uint64_t workspace_limit);
  uint64_t workspace_bytes() const { return ws_bytes_; }
  std::string algorithm() const { return algo_name_; }
  // The legacy API's heuristic list as prepare() saw it, best first: {algo, status, workspace bytes} (empty for
  // non-conv ops and for the graph API, whose list is graph_plan()->choice()).
  struct Candidate {
    int algo;
    int status;
    uint64_t memory;
  };
  const std::vector<Candidate>& candidates() const { return candidates_; }
  const OpTranslation& translation() const { return translation_; }
  const GraphConvPlan* graph_plan() const { return graph_.get(); }  // null: legacy, or not a convolution

  using Resolve = std::function<void*(size_t step, bool out, size_t slot)>;
  void launch(cudaStream_t s, const Resolve& ptr, void* workspace);

 private:
  const Graph& g_;
  OpTranslation translation_;
  cudnnHandle_t dnn_;
  cublasHandle_t blas_;
  std::string ctx_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr, aux_ = nullptr;  // aux: bias / BN parameters
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnActivationDescriptor_t act_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
  cudnnLRNDescriptor_t lrn_ = nullptr;
  int algo_ = -1;
  uint64_t ws_bytes_ = 0;
  std::string algo_name_;
  std::vector<Candidate> candidates_;
  GraphConvCache* conv_plans_ = nullptr;
  std::shared_ptr<const GraphConvPlan> graph_;
  std::array<ConvOperand, 3> graph_operands_{};  // where the plan's x, w, y are among the conv step's operands
};

}  // namespace dlsim::cuda
