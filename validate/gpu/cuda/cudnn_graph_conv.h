#pragma once
// A convolution through cuDNN's graph API, the way PyTorch 2.x runs its convolutions with cudnn.benchmark off:
// an operation graph of one convolution (validate/gpu/conv_graph_spec.h), engine configurations from the
// heuristics and, failing them, the fallback list, the first that passes PyTorch's filter and finalizes within
// the op's workspace (validate/gpu/engine_choice.h), its execution plan kept and executed at every launch with
// a variant pack that binds the operands and the workspace. Built once per op in prepare; ops of one spec share
// one plan (GraphConvCache), as PyTorch's per-shape plan cache does.
//
// Why: cuDNN 9's legacy cudnnConvolution* calls build a graph-API plan inside every call (tens of microseconds
// of host time) and their algorithm list is not the engines PyTorch gets (some of its choices ran 1-2 ms where
// PyTorch's took tens of microseconds on the H200).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "validate/gpu/conv_graph_spec.h"
#include "validate/gpu/cuda/cudnn_backend.h"
#include "validate/gpu/engine_choice.h"

namespace dlsim::cuda {

cudnnDataType_t cudnn_data_type(DType t);

// The backend descriptors of a spec's operation graph: tensors, convolution, operation, graph (finalized).
struct ConvOperationGraph {
  std::vector<BackendDesc> parts;  // tensors x, w, y, the convolution descriptor, the operation
  std::optional<BackendDesc> graph;
};
ConvOperationGraph build_conv_graph(CudnnBackend& api, cudnnHandle_t h, const ConvGraphSpec& spec, const std::string& ctx);

// The engine configurations of a heuristics query (instant or fallback mode), best first, with what the
// choice reads of each (numerical notes, engine index and knobs as a tag).
struct EngineConfigs {
  std::vector<BackendDesc> configs;
  std::vector<EngineOffer> offers;
};
EngineConfigs query_engine_configs(CudnnBackend& api, const BackendDesc& graph, cudnnBackendHeurMode_t mode,
                                   const std::string& ctx);

class GraphConvPlan {
 public:
  // Throws CudaError when no configuration is taken (the message lists what each one did).
  GraphConvPlan(CudnnBackend& api, cudnnHandle_t h, const ConvGraphSpec& spec, uint64_t workspace_limit,
                const std::string& ctx);
  uint64_t workspace_bytes() const { return workspace_; }
  const std::string& engine() const { return engine_; }  // the chosen configuration's tag
  const EngineChoice& choice() const { return choice_; }
  const ConvGraphSpec& spec() const { return spec_; }
  // Runs the plan on the handle's stream over x, w, y (the spec's roles) and the workspace (at least
  // workspace_bytes(); null when that is 0).
  void execute(cudnnHandle_t h, void* x, void* w, void* y, void* workspace, const std::string& ctx) const;

 private:
  CudnnBackend* api_;
  ConvGraphSpec spec_;
  ConvOperationGraph graph_;
  std::vector<BackendDesc> configs_;  // those the choice looked at, which the plan refers to
  std::optional<BackendDesc> plan_;
  EngineChoice choice_;
  std::string engine_;
  uint64_t workspace_ = 0;
};

// Plans by spec and workspace limit.
class GraphConvCache {
 public:
  GraphConvCache(CudnnBackend& api, cudnnHandle_t h) : api_(api), h_(h) {}
  std::shared_ptr<const GraphConvPlan> get(const ConvGraphSpec& spec, uint64_t workspace_limit, const std::string& ctx);
  size_t size() const { return plans_.size(); }

 private:
  CudnnBackend& api_;
  cudnnHandle_t h_;
  std::map<std::string, std::shared_ptr<const GraphConvPlan>> plans_;
};

}  // namespace dlsim::cuda
