#include "workloads/onnx_import.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "common/config_error.h"
#include "common/testing/config_error_of.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {

ModelOptions batch_of(int64_t b) {
  ModelOptions o;
  o.batch = b;
  return o;
}

ModelSummary summary_of(const Graph& forward) { return summarize(forward, make_training_graph(forward, TrainingOptions{})); }

using dlsim::testing::config_error_of;

}  // namespace

#ifndef DLSIM_WITH_ONNX

TEST_CASE("without libonnx-dev the importer says so") {
  CHECK_FALSE(onnx_import_available());
  CHECK_THAT(config_error_of([] { import_onnx_forward("model.onnx", batch_of(1)); }), Catch::Contains("without ONNX support"));
}

#else

#include <onnx/onnx_pb.h>

namespace {

const std::vector<std::string> kTorchvisionCnns = {"alexnet",   "vgg16",     "vgg19",        "resnet18",
                                                   "resnet50",  "resnet101", "resnet152",    "googlenet",
                                                   "inception_v3", "densenet121", "mobilenet_v2", "squeezenet1_1"};

std::string testdata(const std::string& file) { return std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/onnx/" + file; }

fs::path scratch_dir() {
  fs::path d = fs::temp_directory_path() / "dlsim_onnx_import_test";
  fs::create_directories(d);
  return d;
}

// ---- tiny models through the protobuf API
struct Tiny {
  onnx::ModelProto m;
  onnx::GraphProto* g;
  Tiny() : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    g->set_name("tiny");
  }
  // A float tensor input; a negative dim is symbolic ("batch"); no dims at all: no shape.
  void input(const std::string& name, const std::vector<int64_t>& dims, bool with_shape = true) {
    auto* in = g->add_input();
    in->set_name(name);
    if (!with_shape) return;
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (d < 0) dim->set_dim_param("batch");
      else dim->set_dim_value(d);
    }
  }
  void weight(const std::string& name, const std::vector<int64_t>& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : dims) {
      t->add_dims(d);
      n *= d;
    }
    for (int64_t i = 0; i < n; ++i) t->add_float_data(0.01f * static_cast<float>(i % 7));
  }
  void scalar(const std::string& name, float v) {
    auto* node = node_of("Constant", {}, {name}, name);
    auto* a = node->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
    a->mutable_t()->add_float_data(v);
  }
  onnx::NodeProto* node_of(const std::string& op, const std::vector<std::string>& in, const std::vector<std::string>& out,
                           const std::string& name) {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  void ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  void output(const std::string& name) { g->add_output()->set_name(name); }
  std::string save(const std::string& file) const {
    fs::path p = scratch_dir() / file;
    std::ofstream out(p, std::ios::binary);
    REQUIRE(m.SerializeToOstream(&out));
    return p.string();
  }
};

// input (N,3,8,8) -> Conv 4x3x3x3 pad 1 -> Relu -> GlobalAveragePool -> Flatten -> Gemm 10x4 + bias.
Tiny tiny_cnn(const std::string& activation = "Relu") {
  Tiny t;
  t.input("x", {-1, 3, 8, 8});
  t.weight("conv.weight", {4, 3, 3, 3});
  t.weight("fc.weight", {10, 4});
  t.weight("fc.bias", {10});
  auto* c = t.node_of("Conv", {"x", "conv.weight"}, {"c"}, "conv");
  t.ints(c, "kernel_shape", {3, 3});
  t.ints(c, "pads", {1, 1, 1, 1});
  t.node_of(activation, {"c"}, {"r"}, "act");
  t.node_of("GlobalAveragePool", {"r"}, {"p"}, "pool");
  t.node_of("Flatten", {"p"}, {"f"}, "flatten");
  auto* gm = t.node_of("Gemm", {"f", "fc.weight", "fc.bias"}, {"y"}, "fc");
  auto* a = gm->add_attribute();
  a->set_name("transB");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  t.output("y");
  return t;
}

}  // namespace

TEST_CASE("ONNX exports of the torchvision CNNs import to the builders' figures") {
  // Files written by validate/torch/export_onnx.py (training mode, export_params=False: weights are graph inputs).
  for (const std::string& name : kTorchvisionCnns) {
    INFO(name);
    REQUIRE(fs::exists(testdata(name + ".onnx")));
    Graph imported = import_onnx_forward(testdata(name + ".onnx"), batch_of(2));
    CHECK(imported.batch == 2);
    ModelSummary got = summary_of(imported), want = summary_of(build_forward_graph(name, batch_of(2)));
    CHECK(got.params == want.params);
    CHECK(got.fwd_macs == want.fwd_macs);
    CHECK(got.saved_for_backward_bytes == want.saved_for_backward_bytes);
  }
}

TEST_CASE("an ONNX export with its weights as initializers imports to the builder's figures") {
  // validate/torch/export_onnx.py --with-params squeezenet1_1: 4.96 MB, the one committed file that carries weights.
  Graph imported = import_onnx_forward(testdata("squeezenet1_1_with_params.onnx"), batch_of(2));
  ModelSummary got = summary_of(imported), want = summary_of(build_forward_graph("squeezenet1_1", batch_of(2)));
  CHECK(got.params == 1235496u);
  CHECK(got.fwd_macs == want.fwd_macs);
  CHECK(got.saved_for_backward_bytes == want.saved_for_backward_bytes);
}

TEST_CASE("the ONNX export of BERT-base imports to the builder's figures") {
  // validate/torch/export_onnx.py --transformers: the reference module of validate/torch/torch_reference_transformers.py at
  // sequence 128, opset 17 (LayerNormalization; GELU as Div/Erf/Add/Mul/Mul), with its own cross-entropy loss.
  ModelOptions o = batch_of(2);
  o.seq_len = 128;
  ModelSummary got = summary_of(import_onnx_forward(testdata("bert-base.onnx"), o));
  ModelSummary want = summary_of(build_forward_graph("bert-base", o));
  CHECK(got.params == want.params);
  CHECK(got.fwd_macs == want.fwd_macs);
  CHECK(got.saved_for_backward_bytes == want.saved_for_backward_bytes);
}

TEST_CASE("the ONNX export of GPT-2 small imports to the builder's figures") {
  // Sequence 1024; c_attn (Gemm, Reshape, Split) becomes three linears, the tanh GELU chain one Gelu, the
  // causal Where an Add, and the shifted logits a cropping Pad.
  ModelOptions o = batch_of(1);
  o.seq_len = 1024;
  ModelSummary got = summary_of(import_onnx_forward(testdata("gpt2-small.onnx"), o));
  o.attention = Attention::Eager;  // the exported graph is the eager form's
  ModelSummary want = summary_of(build_forward_graph("gpt2-small", o));
  CHECK(got.params == 124439808u);
  CHECK(got.params == want.params);
  CHECK(got.fwd_macs == want.fwd_macs);
  // The export keeps HF's shift (1023 rows of log-probabilities), the builder all 1024 rows.
  CHECK(got.saved_for_backward_bytes == want.saved_for_backward_bytes - 50257u * 4);
}

TEST_CASE("an ONNX model's batch size is the experiment's") {
  for (int64_t b : {1, 5}) {
    Graph g = import_onnx_forward(testdata("resnet18.onnx"), batch_of(b));
    CHECK(g.tensor(g.op(0).inputs[0]).shape == std::vector<int64_t>{b, 3, 224, 224});
    CHECK(g.ops().back().kind == OpKind::CrossEntropyLoss);
  }
  // Through the zoo's entry point, as `dlsim model path.onnx` does.
  CHECK(summary_of(build_forward_graph(testdata("squeezenet1_1.onnx"), batch_of(3))).params == 1235496u);
}

TEST_CASE("a tiny hand-made ONNX model imports with its weights as initializers") {
  std::string path = tiny_cnn().save("tiny.onnx");
  Graph g = import_onnx_forward(path, batch_of(4));
  ModelSummary s = summary_of(g);
  CHECK(s.params == 4u * 3 * 3 * 3 + 10 * 4 + 10);
  CHECK(s.fwd_macs == 4.0 * 4 * 8 * 8 * 3 * 3 * 3 + 4.0 * 10 * 4);
  std::vector<OpKind> kinds;
  for (const Op& o : g.ops()) kinds.push_back(o.kind);
  CHECK(kinds == std::vector<OpKind>{OpKind::Conv2d, OpKind::Relu, OpKind::GlobalAvgPool, OpKind::Flatten, OpKind::Linear,
                                     OpKind::CrossEntropyLoss});
  // The ReLU reads a convolution it alone consumes: in place, as torchvision runs it.
  CHECK(g.ops()[1].attr(Attr::inplace) == 1);
}

TEST_CASE("an ONNX graph above the node limit, or with a weight past 2^50 elements, is refused before it is built") {
  const std::string path = tiny_cnn().save("limited.onnx");  // five nodes, three initializers
  ModelOptions opts = batch_of(2);
  opts.max_graph_nodes = 4;
  CHECK(config_error_of([&] { import_onnx_forward(path, opts); }) ==
        path + ": 'graph': the graph has 5 nodes and 3 initializers, above the limit of 4; raise it with "
               "`max_graph_nodes:` in the experiment or `dlsim model --max-graph-nodes N`");
  opts.max_graph_nodes = 5;
  CHECK(import_onnx_forward(path, opts).ops().size() == 6);  // the limit is inclusive

  // A weight of 2^35 x 2^35 elements (2^70): its element count does not even fit an int64.
  Tiny t = tiny_cnn();
  auto* w = t.g->add_initializer();  // by hand: Tiny::weight would write its 2^70 values
  w->set_name("huge");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(int64_t{1} << 35);
  w->add_dims(int64_t{1} << 35);
  const std::string huge = t.save("huge-weight.onnx");
  CHECK_THAT(config_error_of([&] { import_onnx_forward(huge, batch_of(1)); }),
             Catch::Contains(huge) && Catch::Contains("'huge'") && Catch::Contains("more than 2^50 elements"));
}

TEST_CASE("ONNX import errors name the file and the node") {
  SECTION("an unsupported op") {
    std::string path = tiny_cnn("Sigmoid").save("unsupported.onnx");
    std::string msg = config_error_of([&] { import_onnx_forward(path, batch_of(1)); });
    CHECK_THAT(msg, Catch::Contains(path) && Catch::Contains("'act'") && Catch::Contains("unsupported ONNX op 'Sigmoid'"));
  }
  SECTION("corrupt bytes") {
    fs::path p = scratch_dir() / "corrupt.onnx";
    // Field 1 (ir_version) as a varint longer than ten bytes: no protobuf parser accepts it.
    const char bytes[] = "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x12\x99garbage";
    std::ofstream(p, std::ios::binary) << std::string(bytes, sizeof bytes - 1);
    CHECK_THAT(config_error_of([&] { import_onnx_forward(p.string(), batch_of(1)); }), Catch::Contains(p.string()) && Catch::Contains("not a valid ONNX model"));
  }
  SECTION("a truncated file") {
    std::string path = tiny_cnn().save("whole.onnx");
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    fs::path p = scratch_dir() / "truncated.onnx";
    std::ofstream(p, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    CHECK_THAT(config_error_of([&] { import_onnx_forward(p.string(), batch_of(1)); }), Catch::Contains(p.string()));
  }
  SECTION("a missing file") {
    CHECK_THAT(config_error_of([] { import_onnx_forward("/nonexistent/model.onnx", batch_of(1)); }), Catch::Contains("cannot open"));
  }
  SECTION("an input without a shape") {
    Tiny t = tiny_cnn();
    t.g->mutable_input(0)->clear_type();
    std::string path = t.save("no_shape.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }),
               Catch::Contains(path) && Catch::Contains("'conv'") && Catch::Contains("graph input 'x' has no shape"));
  }
  SECTION("a weight given as a graph input without a shape") {
    Tiny t = tiny_cnn();
    t.g->mutable_initializer()->DeleteSubrange(0, 1);  // conv.weight becomes an undeclared-shape graph input
    t.input("conv.weight", {}, false);
    std::string path = t.save("weight_no_shape.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }), Catch::Contains("weight 'conv.weight'") && Catch::Contains("no shape"));
  }
  SECTION("a value no node produces") {
    Tiny t = tiny_cnn();
    t.g->mutable_node(1)->set_input(0, "nowhere");
    std::string path = t.save("dangling.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }), Catch::Contains("'act'") && Catch::Contains("'nowhere'"));
  }
  SECTION("a kernel_shape that disagrees with the weight (a zero was ignored)") {
    Tiny t = tiny_cnn();
    t.g->mutable_node(0)->mutable_attribute(0)->set_ints(0, 0);  // kernel_shape [0, 3]
    std::string path = t.save("zero_kernel.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }),
               Catch::Contains("'conv'") && Catch::Contains("kernel_shape [0,3] disagrees with the weight's [4,3,3,3]"));
  }
  SECTION("pads so large that the padded size would wrap") {
    Tiny t = tiny_cnn();
    for (int i = 0; i < 4; ++i) t.g->mutable_node(0)->mutable_attribute(1)->set_ints(i, int64_t{1} << 62);
    std::string path = t.save("huge_pads.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }),
               Catch::Contains("'conv'") && Catch::Contains("[1, 2^31]"));
  }
  SECTION("a Clip other than ReLU6 or ReLU") {
    Tiny t = tiny_cnn("Clip");
    t.m.mutable_opset_import(0)->set_version(10);  // min and max as attributes
    for (auto [name, v] : {std::pair{"min", 0.0f}, std::pair{"max", 3.0f}}) {
      auto* a = t.g->mutable_node(1)->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
    }
    std::string path = t.save("clip3.onnx");
    CHECK_THAT(config_error_of([&] { import_onnx_forward(path, batch_of(1)); }), Catch::Contains("'act'") && Catch::Contains("Clip to [0.000000, 3.000000]"));
  }
}

TEST_CASE("ONNX shape arithmetic, fused linear layers, GELU and layer norm") {
  // x (N, 4, 8) -> MatMul W(8x16) + b -> GELU as Div/Erf/Add/Mul/Mul -> LayerNormalization
  //   -> Reshape to [Shape(x)[0], -1] (Shape, Gather, Unsqueeze, Concat) -> Gemm 3x64
  Tiny t;
  t.input("x", {-1, 4, 8});
  t.weight("w", {8, 16});
  t.weight("b", {16});
  t.weight("ln.weight", {16});
  t.weight("ln.bias", {16});
  t.weight("head.weight", {3, 64});
  t.node_of("MatMul", {"x", "w"}, {"xw"}, "fc1");
  t.node_of("Add", {"xw", "b"}, {"h"}, "fc1.bias");
  t.scalar("sqrt2", 1.4142135f);
  t.scalar("one", 1.0f);
  t.scalar("half", 0.5f);
  t.node_of("Div", {"h", "sqrt2"}, {"d"}, "gelu.div");
  t.node_of("Erf", {"d"}, {"e"}, "gelu.erf");
  t.node_of("Add", {"e", "one"}, {"e1"}, "gelu.add");
  t.node_of("Mul", {"h", "e1"}, {"m"}, "gelu.mul");
  t.node_of("Mul", {"m", "half"}, {"g"}, "gelu.half");
  t.node_of("LayerNormalization", {"g", "ln.weight", "ln.bias"}, {"ln"}, "ln");
  t.node_of("Shape", {"ln"}, {"s"}, "shape");
  auto* zero = t.node_of("Constant", {}, {"zero"}, "zero");
  auto* za = zero->add_attribute();
  za->set_name("value_int");
  za->set_type(onnx::AttributeProto::INT);
  za->set_i(0);
  t.node_of("Gather", {"s", "zero"}, {"n"}, "batch_dim");
  auto* axes = t.node_of("Constant", {}, {"axes"}, "axes");
  auto* aa = axes->add_attribute();
  aa->set_name("value_ints");
  aa->set_type(onnx::AttributeProto::INTS);
  aa->add_ints(0);
  t.node_of("Unsqueeze", {"n", "axes"}, {"n1"}, "unsqueeze");
  auto* minus1 = t.node_of("Constant", {}, {"m1"}, "minus_one");
  auto* ma = minus1->add_attribute();
  ma->set_name("value_ints");
  ma->set_type(onnx::AttributeProto::INTS);
  ma->add_ints(-1);
  auto* cat = t.node_of("Concat", {"n1", "m1"}, {"target"}, "target")->add_attribute();
  cat->set_name("axis");
  cat->set_type(onnx::AttributeProto::INT);
  cat->set_i(0);
  t.node_of("Reshape", {"ln", "target"}, {"flat"}, "reshape");
  auto* gm = t.node_of("Gemm", {"flat", "head.weight"}, {"y"}, "head");
  auto* tb = gm->add_attribute();
  tb->set_name("transB");
  tb->set_type(onnx::AttributeProto::INT);
  tb->set_i(1);
  t.output("y");
  Graph g = import_onnx_forward(t.save("mlp.onnx"), batch_of(6));
  std::vector<OpKind> kinds;
  for (const Op& o : g.ops()) kinds.push_back(o.kind);
  CHECK(kinds == std::vector<OpKind>{OpKind::Linear, OpKind::Gelu, OpKind::LayerNorm, OpKind::Reshape, OpKind::Linear,
                                     OpKind::CrossEntropyLoss});
  CHECK(g.op(0).attr(Attr::bias) == 1);
  CHECK(g.tensor(g.op(3).outputs[0]).shape == std::vector<int64_t>{6, 64});
  CHECK(summary_of(g).params == 8u * 16 + 16 + 16 + 16 + 3 * 64);
}

#endif
