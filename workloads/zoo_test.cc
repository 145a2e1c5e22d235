#include "workloads/zoo.h"

#include <boost/graph/topological_sort.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {

const std::vector<std::string> kCnns = {"alexnet",   "vgg16",        "vgg19",       "resnet18",     "resnet50",
                                        "resnet101", "resnet152",    "googlenet",   "inception_v3", "densenet121",
                                        "mobilenet_v2", "squeezenet1_1", "cifar-alexnet", "cifar-vgg16", "cifar-resnet20"};

ModelOptions with_batch(int64_t b) {
  ModelOptions o;
  o.batch = b;
  return o;
}

// Checks the invariants every training graph must satisfy.
void check_training_graph(const Graph& g) {
  INFO(g.name);
  // Issue order: forward, then backward, then optimizer; and every DAG edge points forward in it.
  Phase prev = Phase::Forward;
  for (const Op& o : g.ops()) {
    REQUIRE(static_cast<int>(o.phase) >= static_cast<int>(prev));
    prev = o.phase;
    if (o.phase == Phase::Backward) {
      REQUIRE(o.forward_op >= 0);
      REQUIRE(g.op(o.forward_op).phase == Phase::Forward);
    }
  }
  Graph::Dag d = g.dag();
  std::vector<size_t> topo;
  REQUIRE_NOTHROW(boost::topological_sort(d, std::back_inserter(topo)));  // throws not_a_dag on a cycle
  auto [ei, ee] = boost::edges(d);
  for (; ei != ee; ++ei) REQUIRE(boost::source(*ei, d) < boost::target(*ei, d));
  // Every non-persistent tensor (other than the input batch) is written by the first op touching it, and
  // is read after; weight gradients live until the optimizer step.
  std::vector<OpId> order(g.ops().size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<OpId>(i);
  auto life = tensor_lifetimes(g, order);
  for (const Tensor& t : g.tensors()) {
    const Lifetime& l = life[static_cast<size_t>(t.id)];
    INFO(t.name);
    REQUIRE(l.first >= 0);
    if (t.persistent || t.kind == TensorKind::Input) continue;
    const Op& first = g.op(order[static_cast<size_t>(l.first)]);
    bool written = first.workspace == t.id;
    for (TensorId o : first.outputs) written |= o == t.id;
    REQUIRE(written);
    REQUIRE(l.last >= l.first);
  }
  // A workspace is an op's scratch, allocated right before it and freed right after, never an op's input or
  // output; but for the foreach Adam's temporaries, written by the first update of their group and read by the
  // update of their parameter (training_optimizer.cc).
  for (const Op& o : g.ops())
    for (const auto* ts : {&o.inputs, &o.outputs})
      for (TensorId t : *ts)
        if (g.tensor(t).kind == TensorKind::Workspace) REQUIRE(o.kind == OpKind::AdamUpdate);
}

}  // namespace

TEST_CASE("parameter counts equal torchvision's") {
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"alexnet", 61100840},   {"vgg16", 138357544},    {"vgg19", 143667240},       {"resnet18", 11689512},
      {"resnet50", 25557032},  {"resnet101", 44549160}, {"resnet152", 60192808},    {"googlenet", 6624904},
      {"inception_v3", 23834568}, {"densenet121", 7978856}, {"mobilenet_v2", 3504872}, {"squeezenet1_1", 1235496}};
  for (const auto& [name, params] : expected) {
    INFO(name);
    Graph f = build_forward_graph(name, with_batch(2));
    Graph t = make_training_graph(f, TrainingOptions{});
    CHECK(summarize(f, t).params == params);
  }
}

TEST_CASE("every CNN's training graph is a valid, acyclic issue order with sound lifetimes") {
  for (const std::string& name : kCnns) {
    ModelOptions o = with_batch(2);
    check_training_graph(build_training_graph(name, o));
    o.training.optimizer = Optimizer::Adam;
    o.training.precision = Precision::MixedBF16;
    check_training_graph(build_training_graph(name, o));
  }
}

// validate/torch/torch_reference_cnn.py measured these with PyTorch 1.13 on the CPU.
TEST_CASE("CNNs match PyTorch: params exactly, MACs within 1%, saved-for-backward bytes within 5%") {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_cnn.json");
  REQUIRE(in.good());
  nlohmann::json ref = nlohmann::json::parse(in);
  size_t compared = 0;
  for (const std::string& name : kCnns) {
    REQUIRE(ref["models"].contains(name));
    const auto& m = ref["models"][name];
    for (const auto& [batch, figures] : m["batches"].items()) {
      INFO(name << " batch " << batch);
      ModelOptions o = with_batch(std::stoll(batch));
      Graph f = build_forward_graph(name, o);
      Graph t = make_training_graph(f, o.training);
      ModelSummary s = summarize(f, t);
      CHECK(s.params == m["params"].get<uint64_t>());
      double macs = figures["fwd_macs"].get<double>();
      CHECK(std::abs(s.fwd_macs - macs) <= 0.01 * macs);
      // dlsim models CUDA's bool dropout mask; on the CPU PyTorch keeps a float mask (3 bytes more each).
      uint64_t cpu_saved = s.saved_for_backward_bytes;
      for (const Op& op : t.ops())
        if (op.kind == OpKind::Dropout) cpu_saved += 3 * static_cast<uint64_t>(numel(t.tensor(op.outputs[1]).shape));
      double saved = figures["saved_bytes"].get<double>();
      if (name == "cifar-alexnet") {
        // PyTorch's LocalResponseNorm is a composite of pow/pad/avg_pool3d/... that keeps several
        // intermediates; dlsim models cuDNN's LRN (as SINGA runs it), which keeps input and output.
        CHECK(static_cast<double>(cpu_saved) < saved);
      } else {
        CHECK(std::abs(static_cast<double>(cpu_saved) - saved) <= 0.05 * saved);
        ++compared;
      }
    }
  }
  CHECK(compared >= 2 * 12);
}

TEST_CASE("training graph details: SGD and Adam state, weight gradients, accumulation, mixed precision") {
  ModelOptions o = with_batch(2);
  Graph f = build_forward_graph("resnet50", o);
  Graph sgd = make_training_graph(f, o.training);
  size_t sgd_ops = 0, accumulations = 0, workspaces = 0;
  for (const Op& op : sgd.ops()) {
    if (op.kind == OpKind::SgdMomentumUpdate) {
      ++sgd_ops;
      const Tensor& g = sgd.tensor(op.inputs[1]);
      CHECK(g.kind == TensorKind::Gradient);
      CHECK_FALSE(g.persistent);  // zero_grad(set_to_none=True): allocated in backward, freed after the step
      CHECK(sgd.tensor(op.inputs[2]).kind == TensorKind::OptimizerState);
      CHECK(sgd.tensor(op.inputs[2]).persistent);
    }
    accumulations += op.kind == OpKind::GradAccumulate;
    workspaces += op.workspace != kNoTensor;
  }
  CHECK(sgd_ops == 161);        // ResNet-50's parameter tensors (53 conv + 53 x 2 batch norm + fc weight, bias)
  CHECK(accumulations == 16);   // each bottleneck's input feeds its first conv and its shortcut
  // forward, backward-data, backward-filter (conv1 needs no input gradient); the loss's backward
  CHECK(workspaces == 53 * 3 - 1 + 1);

  o.training.optimizer = Optimizer::Adam;
  Graph adam = make_training_graph(f, o.training);
  uint64_t state_bytes = 0, weight_bytes = 0;
  for (const Tensor& t : adam.tensors()) {
    if (t.kind == TensorKind::OptimizerState) state_bytes += t.bytes;
  }
  uint64_t sqrt_bytes = 0;  // the foreach step's temporaries, one per parameter (training_optimizer.cc)
  for (const Op& op : adam.ops())
    if (op.kind == OpKind::AdamUpdate) {
      weight_bytes += adam.tensor(op.inputs[0]).bytes;
      CHECK(op.workspace == kNoTensor);
      for (TensorId t : op.outputs)
        if (adam.tensor(t).kind == TensorKind::Workspace) sqrt_bytes += adam.tensor(t).bytes;
    }
  CHECK(state_bytes == 2 * weight_bytes);
  CHECK(sqrt_bytes == weight_bytes);
  CHECK(weight_bytes == 4ull * 25557032);

  ModelOptions mixed = with_batch(2);
  mixed.training.precision = Precision::MixedBF16;
  Graph mf = build_forward_graph("resnet50", mixed);
  Graph mt = make_training_graph(mf, mixed.training);
  size_t weight_casts = 0;
  for (const Op& op : mt.ops())
    if (op.kind == OpKind::Copy && op.phase == Phase::Forward && mt.tensor(op.inputs[0]).kind == TensorKind::Weight) ++weight_casts;
  CHECK(weight_casts == 55);  // the 53 conv weights and the fc weight and bias, each cast once
  for (const Tensor& t : mt.tensors())
    if (t.kind == TensorKind::Weight || t.kind == TensorKind::OptimizerState) CHECK(t.dtype == DType::F32);
  ModelSummary fp = summarize(f, sgd), mp = summarize(mf, mt);
  CHECK(mp.params == fp.params);
  // Kept: the bf16 weight copies (2 bytes per parameter) and bf16 activations, which are half the fp32 ones
  // but for the fp32 batch-norm statistics and loss.
  uint64_t act = mp.saved_for_backward_bytes - 2 * mp.params;
  CHECK(act > fp.saved_for_backward_bytes / 2);
  CHECK(act < fp.saved_for_backward_bytes * 6 / 10);
  // A forward graph built for one precision refuses the other.
  CHECK_THROWS_AS(make_training_graph(f, mixed.training), ConfigError);
}

TEST_CASE("zoo errors name the problem") {
  try {
    build_training_graph("resnet5", with_batch(1));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "model");
    CHECK(std::string(e.what()).find("resnet50") != std::string::npos);
  }
  CHECK_THROWS_AS(build_training_graph("resnet50", with_batch(0)), ConfigError);
  CHECK_THROWS_AS(build_training_graph("/nonexistent/model.onnx", with_batch(1)), ConfigError);  // to the importer
  ModelOptions tiny = with_batch(1);
  tiny.image_size = 16;  // VGG's five pools leave nothing
  CHECK_THROWS_AS(build_training_graph("vgg16", tiny), ConfigError);
  tiny.image_size = -3;
  CHECK_THROWS_AS(build_training_graph("alexnet", tiny), ConfigError);
}

TEST_CASE("building is deterministic and the image size is a parameter") {
  ModelOptions o = with_batch(3);
  o.image_size = 160;
  Graph a = build_training_graph("densenet121", o), b = build_training_graph("densenet121", o);
  REQUIRE(a.ops().size() == b.ops().size());
  REQUIRE(a.tensors().size() == b.tensors().size());
  for (size_t i = 0; i < a.ops().size(); ++i) {
    CHECK(a.ops()[i].name == b.ops()[i].name);
    CHECK(a.ops()[i].inputs == b.ops()[i].inputs);
  }
  for (size_t i = 0; i < a.tensors().size(); ++i) CHECK(a.tensors()[i].bytes == b.tensors()[i].bytes);
  CHECK(a.tensors()[0].shape == std::vector<int64_t>{3, 3, 160, 160});
}

TEST_CASE("a setting the model does not read is refused, naming it") {
  ModelOptions o;
  o.batch = 1;
  o.seq_len = 64;
  CHECK_THROWS_WITH(check_model_settings("resnet18", o), "resnet18: 'seq_len': 'resnet18' is an image model: seq_len means nothing to it");
  o.seq_len = 0;
  o.attention = Attention::Eager;
  CHECK_THROWS_WITH(check_model_settings("resnet18", o), Catch::Contains("attention means nothing to it"));
  o.attention.reset();
  o.image_size = 64;
  CHECK_THROWS_WITH(check_model_settings("gpt2-small", o), Catch::Contains("'gpt2-small' is a token model: image_size"));
  CHECK_THROWS_WITH(check_model_settings("x.onnx", o), Catch::Contains("'x.onnx' is an ONNX model (its shapes are the file's)"));
  o.image_size = 0;
  o.training.memory_format = MemoryFormat::NHWC;
  CHECK_THROWS_WITH(check_model_settings("bert-base", o), Catch::Contains("without convolutions: memory_format nhwc"));
  CHECK_NOTHROW(check_model_settings("resnet18", o));
  CHECK_NOTHROW(build_forward_graph("bert-base", o));  // harmless to the builder: code sets nhwc uniformly
  o.training.memory_format = MemoryFormat::NCHW;
  o.max_graph_nodes = 10;
  CHECK_THROWS_WITH(check_model_settings("vgg16", o), Catch::Contains("max_graph_nodes means nothing"));
  CHECK_NOTHROW(check_model_settings("llama3-8b", o));
  o.max_graph_nodes = kDefaultMaxGraphNodes;
  // The builder still refuses what it cannot build.
  o.attention = Attention::SdpaFlash;
  CHECK_THROWS_WITH(build_forward_graph("resnet18", o), Catch::Contains("built with eager attention only"));
  o.attention.reset();
  // What each kind of model reads, from the table the check uses.
  CHECK(model_settings("resnet18").image_size);
  CHECK_FALSE(model_settings("resnet18").seq_len);
  CHECK(model_settings("bert-base").attention == std::vector<Attention>{Attention::Eager});
  CHECK(model_settings("llama3-8b").attention == std::vector<Attention>{Attention::Eager, Attention::SdpaFlash});
  CHECK(model_settings("my/config.json").seq_len);
  CHECK_FALSE(model_settings("my/config.json").image_size);
  const ModelSettings onnx = model_settings("m.onnx");
  CHECK_FALSE(onnx.image_size);
  CHECK_FALSE(onnx.seq_len);
  CHECK(onnx.attention.empty());
  CHECK(onnx.memory_format);
  CHECK_THROWS_WITH(model_settings("resnet5"), Catch::Contains("unknown model 'resnet5'; valid: alexnet, vgg16"));
}
