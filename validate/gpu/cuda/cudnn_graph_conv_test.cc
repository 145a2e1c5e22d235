// The graph path's descriptors and plan choice (cudnn_graph_conv.h) against a fake cuDNN backend that records
// every attribute set and plays scripted heuristics: what dlsim-cuda asks of cuDNN, checked without a GPU.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <memory>

#include "validate/gpu/cuda/cuda_check.h"
#include "validate/gpu/cuda/cudnn_graph_conv.h"

using namespace dlsim;
using namespace dlsim::cuda;

namespace {

// A scripted engine configuration: what its engine says of itself and what its plan does.
struct FakeEngine {
  int64_t index = 0;
  std::vector<cudnnBackendNumericalNote_t> notes;
  std::vector<std::pair<cudnnBackendKnobType_t, int64_t>> knobs;
  bool supported = true;
  int64_t workspace = 0;
};

struct FakeDesc {
  cudnnBackendDescriptorType_t type;
  std::map<cudnnBackendAttributeName_t, std::pair<cudnnBackendAttributeType_t, std::vector<char>>> attrs;
  bool finalized = false;
  const FakeEngine* engine = nullptr;  // engine configs, engines and plans: the script they stand for
  std::pair<cudnnBackendKnobType_t, int64_t> knob{};
};

size_t element_size(cudnnBackendAttributeType_t t) {
  switch (t) {
    case CUDNN_TYPE_INT64: case CUDNN_TYPE_DOUBLE: return 8;
    case CUDNN_TYPE_HANDLE: case CUDNN_TYPE_BACKEND_DESCRIPTOR: case CUDNN_TYPE_VOID_PTR: return sizeof(void*);
    case CUDNN_TYPE_FLOAT: return 4;
    default: return 4;  // the enum-valued types
  }
}

class FakeBackend final : public CudnnBackend {
 public:
  std::vector<FakeEngine> heuristics, fallback;
  std::vector<std::unique_ptr<FakeDesc>> all;  // every descriptor ever made (none is freed, so they stay readable)
  int live = 0;
  std::vector<cudnnBackendHeurMode_t> queried;
  std::vector<const FakeDesc*> executed_plans, executed_packs;

  static FakeDesc& of(cudnnBackendDescriptor_t d) { return *static_cast<FakeDesc*>(d); }

  cudnnStatus_t create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t* d) override {
    all.push_back(std::make_unique<FakeDesc>(FakeDesc{type, {}, false, nullptr, {}}));
    *d = all.back().get();
    ++live;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnStatus_t destroy(cudnnBackendDescriptor_t) override {
    --live;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnStatus_t set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                    int64_t count, const void* values) override {
    if (of(d).finalized) return CUDNN_STATUS_BAD_PARAM;  // cuDNN refuses to change a finalized descriptor
    std::vector<char> bytes(element_size(type) * static_cast<size_t>(count));
    std::memcpy(bytes.data(), values, bytes.size());
    of(d).attrs[name] = {type, bytes};
    if (name == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) of(d).engine = of(*static_cast<void* const*>(values)).engine;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnStatus_t finalize(cudnnBackendDescriptor_t d) override {
    FakeDesc& f = of(d);
    if (f.type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && !f.engine->supported) return CUDNN_STATUS_NOT_SUPPORTED;
    if (f.type == CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) queried.push_back(value<cudnnBackendHeurMode_t>(f, CUDNN_ATTR_ENGINEHEUR_MODE));
    f.finalized = true;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnStatus_t get(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t,
                    int64_t requested, int64_t* count, void* values) override {
    FakeDesc& f = of(d);
    auto* out = static_cast<cudnnBackendDescriptor_t*>(values);
    switch (name) {
      case CUDNN_ATTR_ENGINEHEUR_RESULTS: {
        const auto& list = value<cudnnBackendHeurMode_t>(f, CUDNN_ATTR_ENGINEHEUR_MODE) == CUDNN_HEUR_MODE_FALLBACK ? fallback : heuristics;
        *count = static_cast<int64_t>(list.size());
        for (int64_t i = 0; i < requested && i < *count; ++i) of(out[i]).engine = &list[static_cast<size_t>(i)];
        return CUDNN_STATUS_SUCCESS;
      }
      case CUDNN_ATTR_ENGINECFG_ENGINE:
        of(out[0]).engine = f.engine;
        *count = 1;
        return CUDNN_STATUS_SUCCESS;
      case CUDNN_ATTR_ENGINECFG_KNOB_CHOICES:
        *count = static_cast<int64_t>(f.engine->knobs.size());
        for (int64_t i = 0; i < requested && i < *count; ++i) of(out[i]).knob = f.engine->knobs[static_cast<size_t>(i)];
        return CUDNN_STATUS_SUCCESS;
      case CUDNN_ATTR_ENGINE_NUMERICAL_NOTE:
        *count = static_cast<int64_t>(f.engine->notes.size());
        for (size_t i = 0; i < f.engine->notes.size() && static_cast<int64_t>(i) < requested; ++i)
          static_cast<cudnnBackendNumericalNote_t*>(values)[i] = f.engine->notes[i];
        return CUDNN_STATUS_SUCCESS;
      case CUDNN_ATTR_ENGINE_GLOBAL_INDEX: *static_cast<int64_t*>(values) = f.engine->index; break;
      case CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE: *static_cast<cudnnBackendKnobType_t*>(values) = f.knob.first; break;
      case CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE: *static_cast<int64_t*>(values) = f.knob.second; break;
      case CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE:
        if (!f.finalized) return CUDNN_STATUS_BAD_PARAM;
        *static_cast<int64_t*>(values) = f.engine->workspace;
        break;
      default: return CUDNN_STATUS_NOT_SUPPORTED;
    }
    *count = 1;
    return CUDNN_STATUS_SUCCESS;
  }
  cudnnStatus_t execute(cudnnHandle_t, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack) override {
    if (!of(plan).finalized || !of(pack).finalized) return CUDNN_STATUS_BAD_PARAM;
    executed_plans.push_back(&of(plan));
    executed_packs.push_back(&of(pack));
    return CUDNN_STATUS_SUCCESS;
  }

  template <class T>
  static std::vector<T> values(const FakeDesc& f, cudnnBackendAttributeName_t name) {
    auto it = f.attrs.find(name);
    if (it == f.attrs.end()) FAIL("attribute " << name << " was not set on a descriptor of type " << f.type);
    std::vector<T> v(it->second.second.size() / sizeof(T));
    std::memcpy(v.data(), it->second.second.data(), v.size() * sizeof(T));
    return v;
  }
  template <class T>
  static T value(const FakeDesc& f, cudnnBackendAttributeName_t name) {
    const auto v = values<T>(f, name);
    REQUIRE(v.size() == 1);
    return v[0];
  }
  std::vector<const FakeDesc*> of_type(cudnnBackendDescriptorType_t t) const {
    std::vector<const FakeDesc*> r;
    for (const auto& d : all)
      if (d->type == t) r.push_back(d.get());
    return r;
  }
};

const FakeDesc& target(const FakeDesc& f, cudnnBackendAttributeName_t name) {
  return FakeBackend::of(FakeBackend::value<void*>(f, name));
}

FakeEngine engine(int64_t index, int64_t ws = 0, std::vector<cudnnBackendNumericalNote_t> notes = {}) {
  FakeEngine e;
  e.index = index, e.workspace = ws, e.notes = std::move(notes);
  return e;
}

ConvGraphSpec spec(ConvPass pass, DType t, bool channels_last) {
  ConvGraphSpec s;
  s.pass = pass;
  auto tensor = [&](int64_t uid, std::array<int64_t, 4> d) {
    return ConvTensorSpec{uid, d, dense_strides(d, channels_last), t, 32};
  };
  s.x = tensor(kConvUidX, {2, 8, 10, 10});
  s.w = tensor(kConvUidW, {16, 4, 3, 3});
  s.y = tensor(kConvUidY, {2, 16, 5, 5});
  s.pre_pad = s.post_pad = {1, 1};
  s.stride = {2, 2};
  s.dilation = {1, 1};
  return s;
}

cudnnHandle_t fake_handle() { return reinterpret_cast<cudnnHandle_t>(static_cast<uintptr_t>(0x1000)); }

}  // namespace

TEST_CASE("graph conv: a forward convolution's tensors, convolution, operation and graph descriptors") {
  FakeBackend api;
  ConvOperationGraph g = build_conv_graph(api, fake_handle(), spec(ConvPass::Forward, DType::F32, false), "test");
  const auto tensors = api.of_type(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  REQUIRE(tensors.size() == 3);
  for (const FakeDesc* t : tensors) {
    CHECK(t->finalized);
    CHECK(FakeBackend::value<cudnnDataType_t>(*t, CUDNN_ATTR_TENSOR_DATA_TYPE) == CUDNN_DATA_FLOAT);
    CHECK(FakeBackend::value<int64_t>(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT) == 32);
  }
  const auto op = api.of_type(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  REQUIRE(op.size() == 1);
  CHECK(op[0]->finalized);
  const FakeDesc& x = target(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X);
  const FakeDesc& w = target(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W);
  const FakeDesc& y = target(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y);
  CHECK(FakeBackend::value<int64_t>(x, CUDNN_ATTR_TENSOR_UNIQUE_ID) == 'x');
  CHECK(FakeBackend::values<int64_t>(x, CUDNN_ATTR_TENSOR_DIMENSIONS) == std::vector<int64_t>{2, 8, 10, 10});
  CHECK(FakeBackend::values<int64_t>(x, CUDNN_ATTR_TENSOR_STRIDES) == std::vector<int64_t>{800, 100, 10, 1});
  CHECK(FakeBackend::value<int64_t>(w, CUDNN_ATTR_TENSOR_UNIQUE_ID) == 'w');
  CHECK(FakeBackend::values<int64_t>(w, CUDNN_ATTR_TENSOR_DIMENSIONS) == std::vector<int64_t>{16, 4, 3, 3});
  CHECK(FakeBackend::value<int64_t>(y, CUDNN_ATTR_TENSOR_UNIQUE_ID) == 'y');
  CHECK(FakeBackend::value<float>(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA) == 1.f);
  CHECK(FakeBackend::value<float>(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA) == 0.f);
  const FakeDesc& c = target(*op[0], CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC);
  CHECK(c.type == CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  CHECK(c.finalized);
  CHECK(FakeBackend::value<cudnnDataType_t>(c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) == CUDNN_DATA_FLOAT);
  CHECK(FakeBackend::value<cudnnConvolutionMode_t>(c, CUDNN_ATTR_CONVOLUTION_CONV_MODE) == CUDNN_CROSS_CORRELATION);
  CHECK(FakeBackend::value<int64_t>(c, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS) == 2);
  CHECK(FakeBackend::values<int64_t>(c, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS) == std::vector<int64_t>{1, 1});
  CHECK(FakeBackend::values<int64_t>(c, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS) == std::vector<int64_t>{1, 1});
  CHECK(FakeBackend::values<int64_t>(c, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES) == std::vector<int64_t>{2, 2});
  CHECK(FakeBackend::values<int64_t>(c, CUDNN_ATTR_CONVOLUTION_DILATIONS) == std::vector<int64_t>{1, 1});
  REQUIRE(g.graph.has_value());
  const FakeDesc& graph = FakeBackend::of(g.graph->get());
  CHECK(graph.finalized);
  CHECK(&target(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS) == op[0]);
  CHECK(FakeBackend::value<cudnnHandle_t>(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE) == fake_handle());
}

TEST_CASE("graph conv: the backward passes bind dx, dw and dy to their own attributes, over 16-bit NHWC tensors") {
  FakeBackend api;
  build_conv_graph(api, fake_handle(), spec(ConvPass::BackwardData, DType::BF16, true), "test");
  build_conv_graph(api, fake_handle(), spec(ConvPass::BackwardFilter, DType::F16, true), "test");
  const auto bd = api.of_type(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR);
  const auto bf = api.of_type(CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR);
  REQUIRE(bd.size() == 1);
  REQUIRE(bf.size() == 1);
  auto uid = [](const FakeDesc& op, cudnnBackendAttributeName_t a) {
    return FakeBackend::value<int64_t>(target(op, a), CUDNN_ATTR_TENSOR_UNIQUE_ID);
  };
  CHECK(uid(*bd[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX) == 'x');
  CHECK(uid(*bd[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W) == 'w');
  CHECK(uid(*bd[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY) == 'y');
  CHECK(uid(*bf[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X) == 'x');
  CHECK(uid(*bf[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW) == 'w');
  CHECK(uid(*bf[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY) == 'y');
  const FakeDesc& dx = target(*bd[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX);
  CHECK(FakeBackend::value<cudnnDataType_t>(dx, CUDNN_ATTR_TENSOR_DATA_TYPE) == CUDNN_DATA_BFLOAT16);
  CHECK(FakeBackend::values<int64_t>(dx, CUDNN_ATTR_TENSOR_STRIDES) == std::vector<int64_t>{800, 1, 80, 8});
  const FakeDesc& dw = target(*bf[0], CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW);
  CHECK(FakeBackend::value<cudnnDataType_t>(dw, CUDNN_ATTR_TENSOR_DATA_TYPE) == CUDNN_DATA_HALF);
  CHECK(FakeBackend::values<int64_t>(dw, CUDNN_ATTR_TENSOR_STRIDES) == std::vector<int64_t>{36, 1, 12, 4});
  // 16-bit data, fp32 compute (PyTorch's getConvDescriptor).
  for (const FakeDesc* c : api.of_type(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR))
    CHECK(FakeBackend::value<cudnnDataType_t>(*c, CUDNN_ATTR_CONVOLUTION_COMP_TYPE) == CUDNN_DATA_FLOAT);
}

TEST_CASE("graph conv: the plan is the first heuristic engine that passes the filter, finalizes and fits") {
  FakeBackend api;
  FakeEngine tc = engine(3, 0, {CUDNN_NUMERICAL_NOTE_TENSOR_CORE});
  FakeEngine unsupported = engine(4);
  unsupported.supported = false;
  FakeEngine chosen = engine(7, 1024, {CUDNN_NUMERICAL_NOTE_WINOGRAD});
  chosen.knobs = {{CUDNN_KNOB_TYPE_TILE_SIZE, 1}, {CUDNN_KNOB_TYPE_EDGE, 0}};
  api.heuristics = {engine(1, 0, {CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS}), tc, unsupported, engine(5, 1 << 20),
                    chosen, engine(8)};
  api.fallback = {engine(0)};
  ConvGraphSpec s = spec(ConvPass::Forward, DType::F32, false);
  s.allow_tensor_cores = false;  // fp32, allow_tf32 off
  const GraphConvPlan p(api, fake_handle(), s, 4096, "test");
  CHECK(p.engine() == "eng7_k" + std::to_string(CUDNN_KNOB_TYPE_TILE_SIZE) + "=1_k" +
                          std::to_string(CUDNN_KNOB_TYPE_EDGE) + "=0");
  CHECK(p.workspace_bytes() == 1024);
  CHECK(api.queried == std::vector<cudnnBackendHeurMode_t>{CUDNN_HEUR_MODE_INSTANT});  // no fallback needed
  const auto& t = p.choice().trials;
  REQUIRE(t.size() == 5);
  CHECK(t[0].verdict == EngineVerdict::DownConvertsInputs);
  CHECK(t[1].verdict == EngineVerdict::TensorCoresNotAllowed);
  CHECK(t[2].verdict == EngineVerdict::NotSupported);
  CHECK(t[3].verdict == EngineVerdict::WorkspaceTooLarge);
  CHECK(t[4].verdict == EngineVerdict::Chosen);
  // Plans were built for the three engines that passed the filter; the kept one holds the chosen config and the
  // handle.
  const auto plans = api.of_type(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  REQUIRE(plans.size() == 3);
  CHECK(plans.back()->engine->index == 7);
  CHECK(FakeBackend::value<cudnnHandle_t>(*plans.back(), CUDNN_ATTR_EXECUTION_PLAN_HANDLE) == fake_handle());

  SECTION("each launch binds x, w, y and the workspace in a finalized variant pack") {
    alignas(64) static char buf[4][64];
    p.execute(fake_handle(), buf[0], buf[1], buf[2], buf[3], "launch");
    REQUIRE(api.executed_plans.size() == 1);
    CHECK(api.executed_plans[0] == plans.back());
    const FakeDesc& pack = *api.executed_packs[0];
    const auto uids = FakeBackend::values<int64_t>(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS);
    const auto ptrs = FakeBackend::values<void*>(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS);
    REQUIRE(uids.size() == 3);
    REQUIRE(ptrs.size() == 3);
    std::map<int64_t, void*> bound;
    for (size_t i = 0; i < 3; ++i) bound[uids[i]] = ptrs[i];
    CHECK(bound[kConvUidX] == buf[0]);
    CHECK(bound[kConvUidW] == buf[1]);
    CHECK(bound[kConvUidY] == buf[2]);
    CHECK(FakeBackend::value<void*>(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE) == buf[3]);
  }
  SECTION("a pointer below the declared alignment is refused before cuDNN sees it") {
    alignas(64) static char buf[4][64];
    CHECK_THROWS_WITH(p.execute(fake_handle(), buf[0] + 16, buf[1], buf[2], buf[3], "launch"),
                      Catch::Contains("32-byte aligned"));
    CHECK(api.executed_plans.empty());
  }
}

TEST_CASE("graph conv: the fallback list serves when no heuristic engine is taken, and none at all is an error") {
  FakeBackend api;
  FakeEngine unsupported = engine(9);
  unsupported.supported = false;
  api.heuristics = {unsupported};
  api.fallback = {engine(0, 0)};
  const ConvGraphSpec s = spec(ConvPass::BackwardFilter, DType::F16, true);
  const GraphConvPlan p(api, fake_handle(), s, 0, "test");
  CHECK(p.engine() == "eng0");
  CHECK(p.choice().choice()->source == EngineSource::Fallback);
  CHECK(api.queried == std::vector<cudnnBackendHeurMode_t>{CUDNN_HEUR_MODE_INSTANT, CUDNN_HEUR_MODE_FALLBACK});
  SECTION("a zero workspace is passed as null") {
    alignas(64) static char buf[3][64];
    p.execute(fake_handle(), buf[0], buf[1], buf[2], buf[0], "launch");
    CHECK(FakeBackend::value<void*>(*api.executed_packs.at(0), CUDNN_ATTR_VARIANT_PACK_WORKSPACE) == nullptr);
  }
  SECTION("no engine: the error names the op, the limit and what each engine did") {
    FakeBackend none;
    none.heuristics = {engine(2, 1 << 20)};
    CHECK_THROWS_WITH(GraphConvPlan(none, fake_handle(), s, 100, "op 7 'conv'"),
                      Catch::Contains("op 7 'conv'") && Catch::Contains("fits a workspace of 100 bytes") &&
                          Catch::Contains("heuristics eng2: workspace-too-large (1048576 bytes)"));
  }
}

TEST_CASE("graph conv: ops of one spec and workspace limit share a plan, and descriptors are freed with it") {
  FakeBackend api;
  api.heuristics = {engine(6, 512), engine(2, 0)};
  {
    GraphConvCache cache(api, fake_handle());
    const ConvGraphSpec s = spec(ConvPass::Forward, DType::BF16, true);
    auto a = cache.get(s, 1024, "a");
    auto b = cache.get(s, 1024, "b");
    CHECK(a == b);
    CHECK(a->engine() == "eng6");
    auto c = cache.get(s, 100, "c");  // a smaller workspace: another choice
    CHECK(c != a);
    CHECK(c->engine() == "eng2");
    CHECK(cache.size() == 2);
    CHECK(api.of_type(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR).size() == 2);
  }
  CHECK(api.live == 0);
}
