#include "validate/gpu/cuda/cudnn_graph_conv.h"

#include <algorithm>
#include <cstdint>

#include "validate/gpu/cuda/cuda_check.h"

namespace dlsim::cuda {

cudnnDataType_t cudnn_data_type(DType t) {
  switch (t) {
    case DType::BF16: return CUDNN_DATA_BFLOAT16;
    case DType::F16: return CUDNN_DATA_HALF;
    case DType::F32: return CUDNN_DATA_FLOAT;
    default: throw CudaError(std::string("no cuDNN convolution on ") + to_string(t) + " tensors");
  }
}

namespace {

std::vector<int64_t> vec(const auto& a) { return std::vector<int64_t>(a.begin(), a.end()); }

BackendDesc tensor_desc(CudnnBackend& api, const ConvTensorSpec& t, const std::string& ctx) {
  BackendDesc d(api, CUDNN_BACKEND_TENSOR_DESCRIPTOR, ctx + ", tensor " + static_cast<char>(t.uid));
  const cudnnDataType_t dt = cudnn_data_type(t.dtype);
  d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
  d.set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, vec(t.dims));
  d.set_int64s(CUDNN_ATTR_TENSOR_STRIDES, vec(t.strides));
  d.set_int64s(CUDNN_ATTR_TENSOR_UNIQUE_ID, {t.uid});
  d.set_int64s(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, {t.alignment});
  d.finalize();
  return d;
}

BackendDesc conv_desc(CudnnBackend& api, const ConvGraphSpec& s, const std::string& ctx) {
  BackendDesc d(api, CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, ctx + ", convolution");
  const cudnnDataType_t ct = cudnn_data_type(s.compute);
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;  // PyTorch's (no kernel flip)
  d.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &ct);
  d.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  d.set_int64s(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, {static_cast<int64_t>(s.stride.size())});
  d.set_int64s(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, vec(s.pre_pad));
  d.set_int64s(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, vec(s.post_pad));
  d.set_int64s(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, vec(s.stride));
  d.set_int64s(CUDNN_ATTR_CONVOLUTION_DILATIONS, vec(s.dilation));
  d.finalize();
  return d;
}

// The operation's attributes for each pass: its descriptor type and where x, w, y, the convolution, alpha and
// beta go (the backward passes name their gradients dx, dw, dy).
struct OpAttrs {
  cudnnBackendDescriptorType_t type;
  cudnnBackendAttributeName_t x, w, y, conv, alpha, beta;
};
OpAttrs op_attrs(ConvPass p) {
  switch (p) {
    case ConvPass::Forward:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA};
    case ConvPass::BackwardData:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA};
    case ConvPass::BackwardFilter:
      return {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
              CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA};
  }
  throw CudaError("unknown convolution pass");
}

// cudnn_frontend's plan tag: "eng<global index>" and "_k<knob type>=<value>" per knob choice.
std::string engine_tag(CudnnBackend& api, const BackendDesc& cfg, const BackendDesc& engine, const std::string& ctx) {
  int64_t index = -1;
  engine.get(CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &index);
  std::string tag = "eng" + std::to_string(index);
  std::vector<BackendDesc> knobs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
    knobs.emplace_back(api, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, ctx + ", knob choice");
    raw.push_back(knobs.back().get());
  }
  const int64_t n = cfg.get(CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                            static_cast<int64_t>(raw.size()), raw.data());
  for (int64_t i = 0; i < n && i < static_cast<int64_t>(knobs.size()); ++i) {
    cudnnBackendKnobType_t type{};
    int64_t value = 0;
    knobs[static_cast<size_t>(i)].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &type);
    knobs[static_cast<size_t>(i)].get(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &value);
    tag += "_k" + std::to_string(static_cast<int>(type)) + "=" + std::to_string(value);
  }
  return tag;
}

}  // namespace

ConvOperationGraph build_conv_graph(CudnnBackend& api, cudnnHandle_t h, const ConvGraphSpec& s, const std::string& ctx) {
  ConvOperationGraph g;
  g.parts.push_back(tensor_desc(api, s.x, ctx));
  g.parts.push_back(tensor_desc(api, s.w, ctx));
  g.parts.push_back(tensor_desc(api, s.y, ctx));
  g.parts.push_back(conv_desc(api, s, ctx));
  const OpAttrs a = op_attrs(s.pass);
  BackendDesc op(api, a.type, ctx + ", " + to_string(s.pass) + " operation");
  op.set_desc(a.x, g.parts[0]);
  op.set_desc(a.w, g.parts[1]);
  op.set_desc(a.y, g.parts[2]);
  op.set_desc(a.conv, g.parts[3]);
  op.set(a.alpha, CUDNN_TYPE_FLOAT, 1, &s.alpha);  // fp32 compute: float scaling factors
  op.set(a.beta, CUDNN_TYPE_FLOAT, 1, &s.beta);
  op.finalize();
  g.parts.push_back(std::move(op));
  g.graph.emplace(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, ctx + ", operation graph");
  g.graph->set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
  g.graph->set_desc(CUDNN_ATTR_OPERATIONGRAPH_OPS, g.parts.back());
  g.graph->finalize();
  return g;
}

EngineConfigs query_engine_configs(CudnnBackend& api, const BackendDesc& graph, cudnnBackendHeurMode_t mode,
                                   const std::string& ctx) {
  const std::string what = ctx + (mode == CUDNN_HEUR_MODE_FALLBACK ? ", fallback list" : ", heuristics");
  BackendDesc heur(api, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what);
  heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
  heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heur.finalize();
  // How many, then that many engine configuration descriptors for cuDNN to fill (the backend's protocol).
  const int64_t count = heur.get(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, nullptr);
  EngineConfigs out;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < count; ++i) {
    out.configs.emplace_back(api, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, what + " result " + std::to_string(i));
    raw.push_back(out.configs.back().get());
  }
  if (count == 0) return out;
  const int64_t got = heur.get(CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, raw.data());
  out.configs.erase(out.configs.begin() + std::min(got, count), out.configs.end());
  for (size_t i = 0; i < out.configs.size(); ++i) {
    const BackendDesc& cfg = out.configs[i];
    BackendDesc engine(api, CUDNN_BACKEND_ENGINE_DESCRIPTOR, what + " engine " + std::to_string(i));
    cudnnBackendDescriptor_t e = engine.get();
    cfg.get(CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &e);
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    const int64_t n = engine.get(CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, notes);
    EngineOffer o;
    for (int64_t k = 0; k < n && k < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++k) {
      o.tensor_core |= notes[k] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE;
      o.down_convert_inputs |= notes[k] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
      o.nondeterministic |= notes[k] == CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC;
    }
    o.tag = engine_tag(api, cfg, engine, what);
    out.offers.push_back(std::move(o));
  }
  return out;
}

GraphConvPlan::GraphConvPlan(CudnnBackend& api, cudnnHandle_t h, const ConvGraphSpec& spec, uint64_t limit,
                             const std::string& ctx)
    : api_(&api), spec_(spec) {
  graph_ = build_conv_graph(api, h, spec, ctx);
  EngineConfigs by_source[2];
  std::optional<BackendDesc> last;  // the plan try_plan built last: the chosen one when the choice stops
  auto offers = [&](EngineSource src) {
    EngineConfigs& c = by_source[src == EngineSource::Heuristics ? 0 : 1];
    c = query_engine_configs(api, *graph_.graph,
                             src == EngineSource::Heuristics ? CUDNN_HEUR_MODE_INSTANT : CUDNN_HEUR_MODE_FALLBACK, ctx);
    return c.offers;
  };
  auto try_plan = [&](EngineSource src, size_t i) {
    const BackendDesc& cfg = by_source[src == EngineSource::Heuristics ? 0 : 1].configs[i];
    BackendDesc plan(api, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, ctx + ", execution plan");
    plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    plan.set_desc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfg);
    PlanAttempt a;
    const cudnnStatus_t st = plan.try_finalize();
    if (st != CUDNN_STATUS_SUCCESS) {
      a.detail = cudnnGetErrorString(st);
      return a;
    }
    int64_t ws = 0;
    plan.get(CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &ws);
    a.finalized = true;
    a.workspace = static_cast<uint64_t>(ws);
    last.emplace(std::move(plan));
    return a;
  };
  EngineChoicePolicy policy;
  policy.allow_tensor_cores = spec.allow_tensor_cores;
  policy.workspace_limit = limit;
  choice_ = choose_engine(policy, offers, try_plan);
  const EngineTrial* c = choice_.choice();
  if (!c) {
    std::string tried;
    for (const EngineTrial& t : choice_.trials)
      tried += std::string(tried.empty() ? "" : "; ") + to_string(t.source) + " " + t.tag + ": " +
               to_string(t.verdict) + (t.verdict == EngineVerdict::WorkspaceTooLarge ? " (" + std::to_string(t.workspace) + " bytes)" : "");
    throw CudaError("no cuDNN engine for the " + std::string(to_string(spec.pass)) + " convolution fits a workspace of " +
                    std::to_string(limit) + " bytes (" + ctx + "; " + spec.key() + "; tried: " +
                    (tried.empty() ? "none offered" : tried) + ")");
  }
  plan_ = std::move(last);
  engine_ = c->tag;
  workspace_ = c->workspace;
  // The plan refers to its configuration, which refers to the graph: keep the configurations alive with it.
  for (EngineConfigs& ec : by_source)
    for (BackendDesc& d : ec.configs) configs_.push_back(std::move(d));
}

void GraphConvPlan::execute(cudnnHandle_t h, void* x, void* w, void* y, void* workspace, const std::string& ctx) const {
  // The tensors were declared with an alignment; a pointer below it would make the engine read wrongly.
  const ConvTensorSpec* specs[] = {&spec_.x, &spec_.w, &spec_.y};
  void* ptrs[] = {x, w, y};
  for (int i = 0; i < 3; ++i)
    if (reinterpret_cast<uintptr_t>(ptrs[i]) % static_cast<uintptr_t>(specs[i]->alignment) != 0)
      throw CudaError(std::string("tensor ") + static_cast<char>(specs[i]->uid) + " of " + ctx + " is not " +
                      std::to_string(specs[i]->alignment) + "-byte aligned, as its cuDNN plan was built for");
  const int64_t uids[] = {spec_.x.uid, spec_.w.uid, spec_.y.uid};
  BackendDesc pack(*api_, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, ctx + ", variant pack");
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptrs);
  void* ws = workspace_ > 0 ? workspace : nullptr;
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &ws);
  pack.finalize();
  check(api_->execute(h, plan_->get(), pack.get()), "cudnnBackendExecute", ctx + ", engine " + engine_);
}

std::shared_ptr<const GraphConvPlan> GraphConvCache::get(const ConvGraphSpec& spec, uint64_t limit,
                                                         const std::string& ctx) {
  const std::string key = spec.key() + " workspace<=" + std::to_string(limit);
  auto it = plans_.find(key);
  if (it != plans_.end()) return it->second;
  auto p = std::make_shared<const GraphConvPlan>(api_, h_, spec, limit, ctx);
  plans_.emplace(key, p);
  return p;
}

}  // namespace dlsim::cuda
