#include "workloads/torch_step_graph.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "common/config_error.h"
#include "common/testing/config_error_of.h"
#include "workloads/llama_models.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

std::string fixture(const std::string& name) {
  return std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/" + name + ".torchstep.json";
}

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const Op* first_of_kind(const Graph& g, OpKind k) {
  for (const Op& o : g.ops())
    if (o.kind == k) return &o;
  return nullptr;
}

}  // namespace

TEST_CASE("a recorded convolution step loads with dlsim's kinds and attributes") {
  const TorchStepLoad load = load_torch_step(fixture("tiny_conv"));
  const Graph& g = load.graph;
  CHECK(g.batch == 2);
  const Op* conv = first_of_kind(g, OpKind::Conv2d);
  REQUIRE(conv != nullptr);
  CHECK(conv->phase == Phase::Forward);
  CHECK(conv->attr(Attr::kernel_h) == 3);
  CHECK(conv->attr(Attr::pad_h) == 1);
  CHECK(conv->attr(Attr::in_channels) == 3);
  CHECK(conv->attr(Attr::out_channels) == 4);
  CHECK(conv->attr(Attr::bias) == 1);
  CHECK(conv->attr(Attr::macs) == 2 * 4 * 8 * 8 * 3 * 3 * 3);
  CHECK(conv->flops == 2.0 * static_cast<double>(conv->attr(Attr::macs)));
  // The first layer has no input gradient: convolution_backward is the filter's kernel alone.
  CHECK(first_of_kind(g, OpKind::Conv2dBwdData) == nullptr);
  const Op* filter = first_of_kind(g, OpKind::Conv2dBwdFilter);
  REQUIRE(filter != nullptr);
  CHECK(filter->phase == Phase::Backward);
  CHECK(filter->outputs.size() == 2);  // the weight's and the bias's gradients
  CHECK(first_of_kind(g, OpKind::BatchNorm)->attr(Attr::channels) == 4);
  CHECK(first_of_kind(g, OpKind::Relu)->attr(Attr::inplace) == 1);
  const Op* relu = first_of_kind(g, OpKind::Relu);
  CHECK(relu->inputs == relu->outputs);  // in place: the same tensor read and written
  CHECK(first_of_kind(g, OpKind::MaxPool)->attr(Attr::kernel) == 2);
  CHECK(first_of_kind(g, OpKind::MatMul)->attr(Attr::n) == 3);
  CHECK(first_of_kind(g, OpKind::Softmax) != nullptr);
  CHECK(first_of_kind(g, OpKind::ZeroGrad) == nullptr);  // zero_grad(set_to_none=True) frees, launches nothing
  // What dlsim has no kind for is loaded, named and costed by its bytes.
  CHECK(load.traffic_ops.count("aten::nll_loss_forward") == 1);
  // SGD's foreach passes (_foreach_mul_, then _foreach_add_ twice): multi_tensor_apply's launches over the six
  // parameters, one each (workloads/multi_tensor_apply.h), whose largest chunk is the 3x64 weight's 192 elements
  // times the bytes an element moves (mul_: read and written; add_: two lists read, one written).
  CHECK(load.traffic_ops.count("aten::_foreach_add_") == 0);
  std::vector<const Op*> passes;
  for (const Op& o : g.ops())
    if (o.kind == OpKind::Other && o.other == OtherOp::ForeachPass) passes.push_back(&o);
  REQUIRE(passes.size() == 3);
  for (const Op* o : passes) {
    CHECK(o->phase == Phase::Optimizer);
    CHECK(o->attr(Attr::launches) == 1);
    CHECK(o->attr(Attr::foreach_bytes) == static_cast<int64_t>(o->bytes_read + o->bytes_written));
  }
  CHECK(passes[0]->attr(Attr::chunk_bytes) == 192 * 4 * 2);
  CHECK(passes[1]->attr(Attr::chunk_bytes) == 192 * 4 * 3);
  CHECK(passes[0]->attr(Attr::foreach_bytes) == (108 + 4 + 4 + 4 + 192 + 3) * 4 * 2);
  CHECK(passes[2]->attr(Attr::foreach_bytes) == (108 + 4 + 4 + 4 + 192 + 3) * 4 * 3);
  for (const Op& o : g.ops())
    if (o.kind == OpKind::Other) CHECK(o.bytes_read + o.bytes_written > 0);
  CHECK(load.views > 0);
  CHECK(load.allocations == 1);  // batch norm's empty reserve
}

TEST_CASE("a recorded convolution on an NHWC-strided input is channels_last, as PyTorch then runs it in cuDNN") {
  // tiny_conv's input [2, 3, 8, 8] strided NCHW, then the same recording with it strided NHWC (what ConvNeXt's
  // permutes leave its convolutions): hw/fitted/conv_backend.h decides a depthwise one's kernels by it.
  const std::string text = text_of(fixture("tiny_conv"));
  const std::string nchw = "\"shape\":[2,3,8,8],\"stride\":[192,64,8,1]";
  const std::string nhwc = "\"shape\":[2,3,8,8],\"stride\":[192,1,24,3]";
  std::string strided = text;
  for (size_t at = strided.find(nchw); at != std::string::npos; at = strided.find(nchw, at))
    strided.replace(at, nchw.size(), nhwc);
  REQUIRE(strided != text);
  for (const auto& [body, want] : {std::make_pair(text, 0), std::make_pair(strided, 1)}) {
    const Graph g = torch_step_graph(parse_torch_step(body, "tiny_conv")).graph;
    for (OpKind k : {OpKind::Conv2d, OpKind::Conv2dBwdFilter}) {
      INFO(to_string(k) << " expecting channels_last " << want);
      REQUIRE(first_of_kind(g, k) != nullptr);
      CHECK(first_of_kind(g, k)->attr(Attr::channels_last) == want);
    }
  }
}

TEST_CASE("a recorded step's tensors: parameters and optimizer state live across steps, gradients within one") {
  const TorchStepFile file = read_torch_step(fixture("tiny_conv"));
  const Graph g = torch_step_graph(file).graph;
  uint64_t params = 0;
  for (const Tensor& t : g.tensors()) {
    if (t.learnable) {
      CHECK(t.persistent);
      CHECK(t.kind == TensorKind::Weight);
      params += t.bytes / 4;
    }
    if (t.kind == TensorKind::Gradient) {
      CHECK_FALSE(t.persistent);  // made by backward, freed by zero_grad(set_to_none=True)
      REQUIRE(t.grad_of != kNoTensor);
      CHECK(g.tensor(t.grad_of).learnable);
      CHECK(g.tensor(t.grad_of).bytes == t.bytes);
    }
    if (t.kind == TensorKind::OptimizerState) CHECK(t.persistent);
    if (t.kind == TensorKind::Activation) CHECK_FALSE(t.persistent);
  }
  CHECK(params == file.parameters);
  CHECK(summarize(g, g).params == file.parameters);
}

TEST_CASE("what autograd saved is kept to the backward op that used it, which knows its forward op") {
  const TorchStepFile file = read_torch_step(fixture("tiny_mlp"));
  const TorchStepLoad load = torch_step_graph(file);
  const Graph& g = load.graph;
  REQUIRE_FALSE(file.saved.empty());
  int checked = 0;
  for (const TorchStepSaved& s : file.saved) {
    if (!s.used_by) continue;
    // The op made from the recorded user reads the saved storage's tensor.
    const std::string suffix = "#" + std::to_string(*s.used_by);
    for (const Op& o : g.ops()) {
      if (o.name.size() < suffix.size() || o.name.compare(o.name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const bool reads = std::any_of(o.inputs.begin(), o.inputs.end(), [&](TensorId t) {
        return g.tensor(t).bytes == file.storages[static_cast<size_t>(s.storage)].bytes;
      });
      CHECK(reads);
      CHECK(o.forward_op >= 0);
      CHECK(g.op(o.forward_op).phase == Phase::Forward);
      ++checked;
    }
  }
  CHECK(checked > 0);
  // The graph's saved-for-backward account (activations made in forward that backward ops hold) is PyTorch's own
  // (the file's summary: what autograd packed) plus the loss, which the step holds until backward ends: a tensor
  // freed after its last use is held by the op before its recorded free.
  uint64_t loss_bytes = 0;
  for (const TorchStepOp& op : file.ops)
    if (op.name == "aten::nll_loss_forward")
      for (const TorchStepView& v : op.outputs)
        if (v.result == 0) loss_bytes = file.storages[static_cast<size_t>(v.storage)].bytes;
  CHECK(loss_bytes == 4);
  CHECK(summarize(g, g).saved_for_backward_bytes == file.saved_for_backward_bytes + loss_bytes);
  CHECK(load.held_past_last_use > 0);
}

// The op of `g` made from recorded op `id` (its name ends "#id").
static const Op* op_from_record(const Graph& g, int64_t id) {
  const std::string suffix = "#" + std::to_string(id);
  for (const Op& o : g.ops())
    if (o.name.size() >= suffix.size() && o.name.compare(o.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &o;
  return nullptr;
}

TEST_CASE("autograd's sums of a tensor's gradients are GradAccumulate ops, and the model's own adds stay Adds") {
  // tiny_mlp's blocks compute x + relu(fc(x)): x feeds fc and the add, so backward sums x's two gradients (the
  // add's pass-through and fc's input gradient), once per block: recorded ops 46 and 63.
  const TorchStepFile file = read_torch_step(fixture("tiny_mlp"));
  const TorchStepLoad load = torch_step_graph(file);
  const Graph& g = load.graph;
  CHECK(load.grad_sums == 2);
  for (int64_t id : {46, 63}) {
    REQUIRE(file.ops[static_cast<size_t>(id)].name == "aten::add");
    const Op* sum = op_from_record(g, id);
    REQUIRE(sum != nullptr);
    CHECK(sum->kind == OpKind::GradAccumulate);
    CHECK(sum->phase == Phase::Backward);
    CHECK(sum->forward_op < 0);  // the engine's, no node's
    REQUIRE(sum->inputs.size() >= 2);
    CHECK(g.tensor(sum->inputs[0]).shape == g.tensor(sum->inputs[1]).shape);
    CHECK(g.tensor(sum->outputs.at(0)).shape == g.tensor(sum->inputs[0]).shape);
  }
  int forward_adds = 0;
  for (const Op& o : g.ops()) {
    if (o.kind == OpKind::Add) {
      CHECK(o.phase == Phase::Forward);  // the residual adds: no backward Add is left
      ++forward_adds;
    }
  }
  CHECK(forward_adds == 2);
}

TEST_CASE("a checkpointed block's replayed add is no gradient sum: one of its operands was made in forward") {
  // Recorded op 44 is blocks.1's x + relu(fc(x)) replayed during backward (marked recompute, and x, the
  // checkpoint's input, was made in forward); ops 56 and 83 are the engine's sums of x's gradients.
  const TorchStepFile file = read_torch_step(fixture("tiny_mlp_adamw_checkpointed"));
  const TorchStepLoad load = torch_step_graph(file);
  const Op* replay = op_from_record(load.graph, 44);
  REQUIRE(replay != nullptr);
  CHECK(replay->phase == Phase::Backward);
  CHECK(replay->kind == OpKind::Add);
  for (int64_t id : {56, 83}) {
    const Op* sum = op_from_record(load.graph, id);
    REQUIRE(sum != nullptr);
    CHECK(sum->kind == OpKind::GradAccumulate);
  }
  CHECK(load.grad_sums == 2);
}

TEST_CASE("Hugging Face's checkpointed step sums the same gradients as the plain step, and only its replays recompute") {
  // Non-reentrant checkpoint's early stop leaves the replayed layers' forward hooks unreturned: a recorder that took
  // a module on its stack in backward for a replay marked all of backward from the first replay on, and found no
  // sums. The replay is each decoder layer's forward up to its last saved tensor.
  for (const std::string model : {"qwen2.5-0.5b", "llama3-8b"}) {
    INFO(model);
    const TorchStepFile plain = read_torch_step(fixture(model + "-2-layers-none"));
    const TorchStepFile hf = read_torch_step(fixture(model + "-2-layers-hf"));
    const auto backward = [](const TorchStepFile& f, bool recompute) {
      return std::count_if(f.ops.begin(), f.ops.end(), [&](const TorchStepOp& o) {
        return o.phase == "backward" && !o.view && o.recompute == recompute;
      });
    };
    CHECK(backward(plain, true) == 0);
    // Backward's own kernels, the replays aside, are the plain step's (checkpoint adds views of its saved inputs).
    CHECK(backward(hf, false) == backward(plain, false));
    CHECK(backward(hf, true) > 0);
    const int64_t sums = torch_step_graph(plain).grad_sums;
    CHECK(sums > 0);
    CHECK(torch_step_graph(hf).grad_sums == sums);
  }
}

TEST_CASE("checkpointed blocks recompute in the backward phase, and the forward ops know their blocks") {
  const Graph g = load_torch_step(fixture("tiny_mlp_adamw_checkpointed")).graph;
  REQUIRE(g.blocks == std::vector<std::string>{"blocks.0", "blocks.1"});
  int in_block = 0, recomputed = 0;
  for (const Op& o : g.ops()) {
    if (o.phase == Phase::Forward && o.block >= 0) ++in_block;
    if (o.phase == Phase::Backward && o.kind == OpKind::MatMul && o.name.rfind("blocks.", 0) == 0) ++recomputed;
  }
  CHECK(in_block > 0);
  CHECK(recomputed > 0);
  // AdamW keeps two states per parameter; its step counts are host memory and not in the graph.
  uint64_t state = 0, params = 0;
  for (const Tensor& t : g.tensors()) {
    if (t.kind == TensorKind::OptimizerState) state += t.bytes;
    if (t.learnable) params += t.bytes;
  }
  CHECK(state == 2 * params);
}

TEST_CASE("an experiment's model may be a recorded step, at the batch it was recorded at") {
  ModelOptions o;
  o.batch = 2;
  const Graph g = build_training_graph(fixture("tiny_conv"), o);
  CHECK(g.ops().size() == load_torch_step(fixture("tiny_conv")).graph.ops().size());
  o.batch = 3;
  CHECK_THAT(dlsim::testing::config_error_of([&] { build_training_graph(fixture("tiny_conv"), o); }),
             Catch::Contains("'batch': the step was recorded at batch 2, not 3"));
  CHECK_THAT(dlsim::testing::config_error_of([&] { build_forward_graph(fixture("tiny_conv"), o); }),
             Catch::Contains("a whole training step"));
  o.batch = 2;
  o.seq_len = 128;
  CHECK_THAT(dlsim::testing::config_error_of([&] { check_model_settings(fixture("tiny_conv"), o); }),
             Catch::Contains("a recorded PyTorch step (its shapes are the file's): seq_len means nothing to it"));
}

TEST_CASE("a bad trace file is an error naming the file, the record and the field") {
  const std::string good = text_of(fixture("tiny_conv"));
  auto error_for = [](const std::string& text) { return dlsim::testing::config_error_of([&] { parse_torch_step(text, "x.torchstep.json"); }); };
  CHECK_THAT(error_for("not json"), Catch::StartsWith("x.torchstep.json: not a trace file (invalid JSON"));
  CHECK_THAT(error_for(good.substr(0, good.size() / 2)), Catch::Contains("a truncated file ends early"));
  CHECK_THAT(error_for("{}"), Catch::Contains("'format': missing"));
  CHECK_THAT(error_for("[1]"), Catch::Contains("must be an object, got [1]"));
  CHECK_THAT(error_for(R"({"format": "onnx", "version": 1})"),
             Catch::Contains("'format': not a dlsim trace file: expected format 'dlsim-torch-step', got 'onnx'"));
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK_THAT(error_for(replaced("\"version\":1", "\"version\":2")),
             Catch::Contains("'version': version 2 of the format; this dlsim reads version 1"));
  CHECK_THAT(error_for(replaced("\"batch\":2", "\"batch\":\"two\"")),
             Catch::Contains("'step.batch': must be an integer"));
  CHECK_THAT(error_for(replaced("{\"id\":3,\"name\":\"aten::native_batch_norm\"", "{\"id\":3")),
             Catch::Contains("'ops[3].name': missing"));
  CHECK_THAT(error_for(replaced("{\"id\":0,\"name\":\"aten::convolution\",\"overload\":\"default\",\"phase\":\"forward\","
                                "\"inputs\":[{\"arg\":\"input\",\"storage\":15",
                                "{\"id\":0,\"name\":\"aten::convolution\",\"overload\":\"default\",\"phase\":\"forward\","
                                "\"inputs\":[{\"arg\":\"input\",\"storage\":4700")),
             Catch::Contains("'ops[0].inputs[0].storage': names storage 4700, but the file has 41"));
  CHECK_THAT(error_for(replaced("\"id\":0,\"bytes\":432", "\"id\":0,\"bytes\":-432")),
             Catch::Contains("'storages[0].bytes': must be in [0, "));
  CHECK_THAT(error_for(replaced("\"overload\":\"default\",\"phase\":\"forward\"", "\"phase\":\"sideways\"")),
             Catch::Contains("'ops[0].phase': unknown phase 'sideways'"));
  CHECK_THAT(dlsim::testing::config_error_of([&] { parse_torch_step(good, "x.torchstep.json", 10); }),
             Catch::Contains("'ops': 59 ops, above max_graph_nodes 10"));
  CHECK_THAT(error_for(replaced("\"batch\":2", "\"batch\":2,\"weight_decay\":-1")),
             Catch::Contains("'step.weight_decay': must be in [0, 1]"));
}

TEST_CASE("a recorded step's weight decay is read where import-torch wrote it, and absent from older recordings") {
  const std::string good = text_of(fixture("tiny_conv"));
  CHECK_FALSE(parse_torch_step(good, "x.torchstep.json").weight_decay.has_value());
  std::string decayed = good;
  const size_t at = decayed.find("\"batch\":2");
  REQUIRE(at != std::string::npos);
  decayed.insert(at, "\"weight_decay\":0.0001,");
  const TorchStepFile f = parse_torch_step(decayed, "x.torchstep.json");
  REQUIRE(f.weight_decay.has_value());
  CHECK(*f.weight_decay == 1e-4);
}

TEST_CASE("the Llama-family zoo graph against Hugging Face's recorded step: the saved bytes that differ, each named") {
  // Two decoder layers of each preset's config, batch 1, sequence 64, mixed-bf16, AdamW, recorded with PyTorch
  // 2.11 and transformers 5 (workloads/testdata/torch_steps/). Parameters agree exactly; the saved bytes differ by
  // (docs/models.md, "Against a recorded step"):
  //   - the (1, 1, S, S) causal mask each layer's SDPA keeps in the recording: on fake tensors transformers'
  //     packed-sequence check cannot read the position ids and keeps the mask, where a real step passes none
  //     (is_causal=True), as the zoo does;
  //   - at batch 1 labels[..., 1:] of the padded labels is contiguous: PyTorch keeps the (S + 1) int64 padded
  //     labels, the zoo its shifted copy of S (8 bytes); and nll_loss's 4-byte total_weight, not built.
  // (Before the zoo followed PyTorch 2.x and transformers 5 it also kept an fp32 x^2 per RMSNorm and lacked the
  // log-probabilities' last row.)
  const int64_t seq = 64;
  for (const std::string model : {"qwen2.5-0.5b", "llama3-8b"}) {
    INFO(model);
    const std::string dir = std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_steps/";
    const LlamaConfig c = load_llama_config(dir + model + "-2-layers.config.json");
    const TorchStepFile file = read_torch_step(fixture(model + "-2-layers-none"));
    ModelOptions o;
    o.batch = 1;
    o.seq_len = seq;
    o.training.precision = Precision::MixedBF16;
    o.training.optimizer = Optimizer::AdamW;
    const Graph zoo_fwd = build_forward_graph(dir + model + "-2-layers.config.json", o);
    const Graph zoo = make_training_graph(zoo_fwd, o.training);
    const ModelSummary s = summarize(zoo_fwd, zoo);
    CHECK(s.params == file.parameters);
    const int64_t masks = c.layers * seq * seq * 2;
    const int64_t labels_view = 8, total_weight = 4;
    CHECK(static_cast<int64_t>(s.saved_for_backward_bytes) - static_cast<int64_t>(file.saved_for_backward_bytes) ==
          -masks - labels_view - total_weight);
  }
}
