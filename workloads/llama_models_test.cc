#include "workloads/llama_models.h"

#include <boost/graph/topological_sort.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "common/config_error.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

// The tensor of this name (each Llama tensor's name is unique); fails the test when there is none.
const Tensor& llama_tensor_named(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors())
    if (t.name == name) return t;
  FAIL("no tensor " << name);
  throw std::logic_error("unreachable");
}

ModelOptions opts_of(int64_t batch, int64_t seq, Attention attention, Precision precision = Precision::FP32) {
  ModelOptions o;
  o.batch = batch;
  o.seq_len = seq;
  o.attention = attention;
  o.training.precision = precision;
  o.training.optimizer = Optimizer::AdamW;
  return o;
}

ModelSummary summary_of(const LlamaConfig& c, const ModelOptions& o) {
  const Graph f = build_llama(c, o);
  return summarize(f, make_training_graph(f, o.training));
}

nlohmann::json llama_reference() {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_llama.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

LlamaConfig config_from(const std::string& name, const nlohmann::json& j) {
  LlamaConfig c;
  c.name = name;
  c.source = "validate/torch/torch_reference_llama.py";
  c.vocab = j["vocab"].get<int64_t>();
  c.hidden = j["hidden"].get<int64_t>();
  c.layers = j["layers"].get<int64_t>();
  c.heads = j["heads"].get<int64_t>();
  c.kv_heads = j["kv_heads"].get<int64_t>();
  c.intermediate = j["inner"].get<int64_t>();
  c.max_positions = 4096;
  c.tied_embeddings = j["tied"].get<bool>();
  c.qkv_bias = j.value("qkv_bias", false);
  return c;
}

std::string error_key(const LlamaConfig& c, const ModelOptions& o) {
  try {
    build_llama(c, o);
  } catch (const ConfigError& e) {
    return e.key();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("Llama presets have their config.json's parameter counts") {
  // The published counts (each model card's; Llama-3-8B's 8,030,261,248), from the configs' figures.
  const std::pair<LlamaConfig, uint64_t> presets[] = {
      {llama3_2_1b_config(), 1235814400u}, {llama3_8b_config(), 8030261248u},  {llama2_7b_config(), 6738415616u},
      {llama2_13b_config(), 13015864320u}, {mistral_7b_config(), 7241732096u}, {qwen2_5_0_5b_config(), 494032768u}};
  for (const auto& [c, params] : presets) {
    INFO(c.name << " (" << c.source << ")");
    CHECK(llama_parameter_count(c) == params);
    // The built graph holds exactly those parameters, every one reached by the loss (so updated by AdamW).
    const Graph f = build_llama(c, opts_of(1, 16, Attention::SdpaFlash));
    const Graph t = make_training_graph(f, opts_of(1, 16, Attention::SdpaFlash).training);
    CHECK(summarize(f, t).params == params);
    uint64_t updated = 0;
    for (const Op& o : t.ops())
      if (o.kind == OpKind::AdamUpdate) updated += t.tensor(o.inputs[0]).bytes / 4;
    CHECK(updated == params);
    CHECK(f.blocks.size() == static_cast<size_t>(c.layers));
  }
}

TEST_CASE("Llama eager saved-for-backward bytes are PyTorch 2.11's on scaled-down configs, to the named bytes") {
  const nlohmann::json ref = llama_reference();
  REQUIRE(ref["models"].size() >= 2);
  int compared = 0;
  for (const auto& [name, m] : ref["models"].items()) {
    const LlamaConfig c = config_from(name, m["config"]);
    CHECK(llama_parameter_count(c) == m["params"].get<uint64_t>());
    for (const auto& run : m["runs"]) {
      const std::string precision = run["precision"].get<std::string>();
      const Precision p = precision == "bf16" ? Precision::BF16 : Precision::FP32;
      const int64_t batch = run["batch"].get<int64_t>(), seq = run["seq_len"].get<int64_t>();
      const ModelSummary s = summary_of(c, opts_of(batch, seq, Attention::Eager, p));
      CHECK(s.params == m["params"].get<uint64_t>());
      const double torch_bytes = run["saved_for_backward_bytes"].get<double>();
      const double ours = static_cast<double>(s.saved_for_backward_bytes);
      INFO(name << " " << precision << " batch " << batch << " seq " << seq << ": dlsim " << ours << " B, PyTorch "
                << torch_bytes << " B");
      // nll_loss's 4-byte total_weight, not built; at batch 1 labels[..., 1:] is contiguous, so PyTorch keeps the
      // padded labels ((S + 1) int64) where dlsim keeps its shifted copy (S).
      CHECK(ours - torch_bytes == -4.0 - (batch == 1 ? 8.0 : 0.0));
      ++compared;
    }
  }
  CHECK(compared >= 8);
}

TEST_CASE("Llama sdpa-flash keeps the log-sum-exp instead of the scores: FlashAttention's account") {
  // Eager keeps, per layer, softmax's fp32 probabilities (B, heads, S, S), plus their cast to bf16 that the context
  // matmul keeps in a bf16 model; flash keeps the (B, heads, S) fp32 log-sum-exp instead. Both keep q, the
  // repeated k and v, and the attention output (eager's transposed copy; flash's output, o_proj's input).
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 3}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", false}});
  for (Precision p : {Precision::FP32, Precision::BF16}) {
    const double b = 2, h = 4, s = 96, l = 3;
    const ModelSummary eager = summary_of(c, opts_of(2, 96, Attention::Eager, p));
    const ModelSummary flash = summary_of(c, opts_of(2, 96, Attention::SdpaFlash, p));
    const double probs = b * h * s * s * (p == Precision::BF16 ? 4 + 2 : 4), lse = b * h * s * 4;
    CHECK(static_cast<double>(eager.saved_for_backward_bytes) - static_cast<double>(flash.saved_for_backward_bytes) ==
          l * (probs - lse));
  }
  // What the FlashAttention op keeps, by name and dtype (bf16 under mixed precision: SDPA is on autocast's list).
  const Graph f = build_llama(c, opts_of(1, 64, Attention::SdpaFlash, Precision::MixedBF16));
  const Graph t = make_training_graph(f, opts_of(1, 64, Attention::SdpaFlash, Precision::MixedBF16).training);
  int flash_ops = 0;
  for (const Op& o : t.ops()) {
    if (o.kind != OpKind::FlashAttentionBwd) continue;
    ++flash_ops;
    REQUIRE(o.inputs.size() == 6);  // grad, q, k, v, output, log-sum-exp
    for (size_t i = 1; i <= 4; ++i) CHECK(t.tensor(o.inputs[i]).dtype == DType::BF16);
    CHECK(t.tensor(o.inputs[1]).shape == std::vector<int64_t>{1, 4, 64, 32});
    CHECK(t.tensor(o.inputs[2]).shape == std::vector<int64_t>{1, 4, 64, 32});  // k repeated to the 4 heads
    CHECK(t.tensor(o.inputs[5]).dtype == DType::F32);
    CHECK(t.tensor(o.inputs[5]).shape == std::vector<int64_t>{1, 4, 64});
    // Causal: half of 4 B H S^2 d forward; the backward 2.5 times that.
    CHECK(o.flops == Approx(2.5 * 0.5 * 4 * 1 * 4 * 64 * 64 * 32));
    CHECK(t.op(o.forward_op).flops == Approx(0.5 * 4 * 1 * 4 * 64 * 64 * 32));
  }
  CHECK(flash_ops == 3);
  for (const Tensor& x : t.tensors()) CHECK(x.shape != std::vector<int64_t>{1, 4, 64, 64});  // no scores matrix
}

TEST_CASE("Llama's RMSNorm as PyTorch's kernels, keeping what 2.x's autograd keeps: x in fp32, rstd, normalised x") {
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 2}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", false}});
  for (Precision p : {Precision::MixedBF16, Precision::BF16}) {
    INFO(to_string(p));
    const bool x16 = p == Precision::BF16;  // under autocast the residual stream, the norms' input, is fp32
    const ModelOptions o = opts_of(2, 32, Attention::SdpaFlash, p);
    const Graph t = make_training_graph(build_llama(c, o), o.training);
    int norms = 0;
    for (const std::string n : {"model.layers.0.input_layernorm", "model.layers.0.post_attention_layernorm",
                                "model.layers.1.input_layernorm", "model.layers.1.post_attention_layernorm",
                                "model.norm"}) {
      INFO(n);
      ++norms;
      // forward: (the fp32 cast), pow, mean, + eps, rsqrt, x * rstd, (the cast back), weight * that, in this order
      std::vector<std::string> fwd, bwd;
      std::set<TensorId> read_in_backward;
      for (const Op& op : t.ops()) {
        if (op.name != n && op.name.rfind(n + ".", 0) != 0) continue;
        const bool backward = op.phase == Phase::Backward && op.kind != OpKind::GradAccumulate;
        if (op.phase == Phase::Forward) fwd.push_back(op.name.substr(n.size()));
        if (backward) bwd.push_back(op.name.substr(n.size()));
        if (backward)
          for (TensorId x : op.inputs) read_in_backward.insert(x);
      }
      std::vector<std::string> want = {".pow", ".mean", ".add_eps", ".rsqrt", ".mul_rstd", ""};
      if (x16) {
        want.insert(want.begin(), ".to_fp32.cast");
        want.insert(want.end() - 1, ".to_input_dtype.cast");
      }
      CHECK(fwd == want);
      if (!x16) {  // the profiled H100 step's 13 kernels per norm (the sum of x's two gradients is an accumulation)
        CHECK(bwd == std::vector<std::string>{".bwd1", ".bwd0", ".bwd_reduce0", ".mul_rstd.bwd1", ".mul_rstd.bwd0",
                                              ".mul_rstd.bwd_reduce1", ".rsqrt.bwd_pow", ".rsqrt.bwd_mul_half",
                                              ".rsqrt.bwd_mul_grad", ".mean.bwd", ".pow.bwd_mul_exponent",
                                              ".pow.bwd_mul_grad"});
      }
      // what the backward reads of the forward's tensors: the fp32 x, rstd (B, S, 1), the normalised x in x's dtype
      // and the weight; not x^2, the mean or mean + eps
      for (const char* freed : {".pow.out", ".mean.out", ".add_eps.out"})
        CHECK(read_in_backward.count(llama_tensor_named(t, n + freed).id) == 0);
      const Tensor& rstd = llama_tensor_named(t, n + ".rstd");
      CHECK(rstd.shape == std::vector<int64_t>{2, 32, 1});
      CHECK(read_in_backward.count(rstd.id) == 1);
      const Tensor& normed = llama_tensor_named(t, n + (x16 ? ".normalized.bf16" : ".normalized"));
      CHECK(normed.dtype == (x16 ? DType::BF16 : DType::F32));
      CHECK(read_in_backward.count(normed.id) == 1);
      CHECK(read_in_backward.count(llama_tensor_named(t, n + ".weight").id) == 1);
    }
    CHECK(norms == 2 * 2 + 1);
  }
}

TEST_CASE("kernels: fused builds Llama's RMSNorm as one op keeping the same tensors") {
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 2}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", false}});
  for (Precision p : {Precision::MixedBF16, Precision::BF16}) {
    INFO(to_string(p));
    ModelOptions o = opts_of(2, 32, Attention::SdpaFlash, p);
    const ModelOptions eager = o;
    o.training.kernels = Kernels::Fused;
    const Graph t = make_training_graph(build_llama(c, o), o.training);
    int norms = 0;
    for (const Op& op : t.ops()) {
      if (op.kind == OpKind::RmsNorm) {
        // y, (x in fp32 when x is 16-bit), rstd, normalised x; one read of x and the weight
        const bool x16 = op.attr(Attr::has_x_fp32) != 0;
        CHECK(x16 == (p == Precision::BF16));
        REQUIRE(op.outputs.size() == (x16 ? 4u : 3u));
      }
      if (op.kind != OpKind::RmsNormBwd) continue;
      ++norms;
      REQUIRE(op.inputs.size() == 5);  // grad, fp32 x, rstd, normalised x, weight
      CHECK(t.tensor(op.inputs[1]).dtype == DType::F32);
      CHECK(t.tensor(op.inputs[2]).shape == std::vector<int64_t>{2, 32, 1});
    }
    CHECK(norms == 2 * 2 + 1);
    // the same bytes saved for backward as the written-out norms (the fused optimizer step saves nothing)
    const Graph f_eager = build_llama(c, eager), f_fused = build_llama(c, o);
    CHECK(summarize(f_fused, t).saved_for_backward_bytes ==
          summarize(f_eager, make_training_graph(f_eager, eager.training)).saved_for_backward_bytes);
  }
}

TEST_CASE("Llama's loss as transformers 5 runs it: logits.float() at every position, the labels padded, shifted") {
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 2}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", true}});
  const ModelOptions o = opts_of(2, 32, Attention::SdpaFlash, Precision::MixedBF16);
  const Graph t = make_training_graph(build_llama(c, o), o.training);
  const Op* loss = nullptr;
  for (const Op& op : t.ops()) {
    if (op.kind == OpKind::CrossEntropyLoss) loss = &op;
    // no copy of the logits: a Pad only moves the int64 labels
    if (op.kind == OpKind::Pad) CHECK(t.tensor(op.inputs[0]).dtype == DType::I64);
  }
  REQUIRE(loss != nullptr);
  CHECK(loss->attr(Attr::rows) == 2 * 32);  // every position, the last one's label ignore_index
  CHECK(loss->attr(Attr::classes) == 512);
  const Tensor& logits = t.tensor(loss->inputs[0]);
  CHECK(logits.dtype == DType::F32);
  CHECK(logits.shape == std::vector<int64_t>{2, 32, 512});
  // Held to the loss (the forward's output holds them), read by no kernel: the bf16 logits, the last hidden state.
  REQUIRE(loss->inputs.size() == 4);
  CHECK(t.tensor(loss->inputs[2]).dtype == DType::BF16);
  CHECK(t.tensor(loss->inputs[2]).shape == std::vector<int64_t>{2, 32, 512});
  CHECK(t.tensor(loss->inputs[3]).name == "model.norm.out");
  CHECK(loss->bytes_read == logits.bytes + 2 * 32 * 8);
  // The target: labels[..., 1:].contiguous() of F.pad(labels, (0, 1)), the labels being the input ids.
  const Tensor& shifted = t.tensor(loss->inputs[1]);
  CHECK(shifted.kind == TensorKind::Activation);
  CHECK(shifted.dtype == DType::I64);
  CHECK(shifted.shape == std::vector<int64_t>{2, 32});
  auto producer = [&](TensorId x) -> const Op* {
    for (const Op& op : t.ops())
      if (!op.outputs.empty() && op.outputs[0] == x) return &op;
    return nullptr;
  };
  const Op* shift = producer(shifted.id);
  REQUIRE(shift != nullptr);
  CHECK(shift->kind == OpKind::Pad);
  const Op* pad = producer(shift->inputs[0]);
  REQUIRE(pad != nullptr);
  CHECK(t.tensor(pad->outputs[0]).shape == std::vector<int64_t>{2, 33});
  CHECK(t.tensor(pad->inputs[0]).name == "input_ids");
  // Backward keeps the log-probabilities of every position and the shifted labels, not the padded ones.
  for (const Op& op : t.ops()) {
    if (op.kind != OpKind::CrossEntropyLossBwd) continue;
    CHECK(t.tensor(op.inputs[0]).shape == std::vector<int64_t>{2 * 32, 512});
    CHECK(op.inputs[1] == shifted.id);
    for (TensorId x : op.inputs) CHECK(x != pad->outputs[0]);
  }
}

TEST_CASE("Llama training graphs are DAGs in issue order with a block per layer, eager and flash, mixed and bf16") {
  for (Attention a : {Attention::Eager, Attention::SdpaFlash}) {
    for (Precision p : {Precision::FP32, Precision::MixedBF16, Precision::BF16}) {
      INFO(to_string(a) << " " << to_string(p));
      const ModelOptions o = opts_of(2, 64, a, p);
      const Graph t = build_training_graph("qwen2.5-0.5b", o);
      CHECK(t.blocks.size() == 24);
      Graph::Dag d = t.dag();
      std::vector<size_t> topo;
      REQUIRE_NOTHROW(boost::topological_sort(d, std::back_inserter(topo)));
      auto [ei, ee] = boost::edges(d);
      for (; ei != ee; ++ei) REQUIRE(boost::source(*ei, d) < boost::target(*ei, d));
      size_t adam = 0;
      for (const Op& op : t.ops()) adam += op.kind == OpKind::AdamUpdate;
      CHECK(adam == 24 * 12 + 2);  // 9 weights, 3 biases per layer; the tied embedding and the final norm
    }
  }
}

TEST_CASE("Llama configs that cannot be built are errors naming the field") {
  const ModelOptions o = opts_of(1, 64, Attention::SdpaFlash);
  LlamaConfig c = llama3_8b_config();
  c.heads = 30;  // 4096 / 30
  CHECK(error_key(c, o) == "num_attention_heads");
  c = llama3_8b_config();
  c.kv_heads = 5;
  CHECK(error_key(c, o) == "num_key_value_heads");
  c = llama3_8b_config();
  c.intermediate = 0;
  CHECK(error_key(c, o) == "intermediate_size");
  c = llama3_8b_config();
  CHECK(error_key(c, opts_of(1, 8193, Attention::SdpaFlash)) == "seq_len");  // max_position_embeddings 8192
  CHECK(error_key(c, opts_of(1, 1000000000, Attention::Eager)) == "seq_len");
  CHECK(error_key(c, opts_of(1, 1, Attention::Eager)) == "seq_len");
  try {
    build_llama(c, opts_of(1, 8193, Attention::SdpaFlash));
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("8192") != std::string::npos);
  }
  // A sequence of 10^9 within a config that allows it: the S x S scores (eager) or the flash op's multiply-adds
  // overflow dlsim's limits, an error rather than a crash.
  c.max_positions = int64_t{1} << 40;
  CHECK_THROWS_AS(build_llama(c, opts_of(1, 1000000000, Attention::Eager)), ConfigError);
  CHECK_THROWS_AS(build_llama(c, opts_of(1, 1000000000, Attention::SdpaFlash)), ConfigError);
  // A graph larger than dlsim may hold: the estimate, before anything is built.
  c = llama3_8b_config();
  c.layers = 1000000000;
  try {
    build_llama(c, o);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "num_hidden_layers");
    CHECK(std::string(e.what()).find("MiB") != std::string::npos);
    CHECK(std::string(e.what()).find("max_graph_nodes") != std::string::npos);
  }
  c.layers = int64_t{1} << 62;
  CHECK(error_key(c, o) == "num_hidden_layers");
}

TEST_CASE("attention: sdpa-flash is the Llama default and refused for the eager-only transformers") {
  ModelOptions o;
  o.batch = 1;
  o.seq_len = 32;
  size_t flash = 0;
  const Graph g = build_forward_graph("llama3.2-1b", o);
  for (const Op& op : g.ops()) flash += op.kind == OpKind::FlashAttention;
  CHECK(flash == 16);
  o.attention = Attention::SdpaFlash;
  try {
    build_forward_graph("bert-base", o);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "attention");
    CHECK(std::string(e.what()).find("llama3-8b") != std::string::npos);
    CHECK(std::string(e.what()).find("gpt2-small") != std::string::npos);
  }
  CHECK_NOTHROW(build_forward_graph("gpt2-small", o));
  o.attention = Attention::Eager;
  CHECK_NOTHROW(build_forward_graph("gpt2-small", o));
  o.seq_len = 0;  // the presets' default sequence
  CHECK(build_forward_graph("mistral-7b", o).tensor(0).shape == std::vector<int64_t>{1, kLlamaDefaultSeqLen});
}

TEST_CASE("Llama forward MACs follow the layer sizes, the causal flash kernel's half of the attention products") {
  const LlamaConfig c = llama3_8b_config();
  const double b = 1, s = 512, h = 4096, kv = 1024, i = 14336, l = 32, v = 128256, heads = 32, d = 128;
  // Per token and layer: q and o (2 h^2), k and v (2 h kv), the MLP (3 h i); the head (h v).
  const double projections = b * s * (l * (2 * h * h + 2 * h * kv + 3 * h * i) + h * v);
  const double attention = b * l * heads * 2 * s * s * d;  // QK^T and PV, full S x S
  CHECK(summary_of(c, opts_of(1, 512, Attention::Eager)).fwd_macs == Approx(projections + attention).epsilon(1e-12));
  CHECK(summary_of(c, opts_of(1, 512, Attention::SdpaFlash)).fwd_macs ==
        Approx(projections + attention / 2).epsilon(1e-12));
}

namespace {
std::string config_file(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / "dlsim_llama_config_test";
  std::filesystem::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p) << text;
  return p.string();
}
ConfigError load_error(const std::string& text) {
  try {
    load_llama_config(config_file("bad.config.json", text));
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no error for " << text);
  throw std::logic_error("unreachable");
}
}  // namespace

TEST_CASE("a Hugging Face config.json builds the model it describes") {
  const std::string dir = std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/llama_configs/";
  const std::pair<std::string, LlamaConfig> files[] = {{"Meta-Llama-3-8B.config.json", llama3_8b_config()},
                                                      {"Qwen2.5-0.5B.config.json", qwen2_5_0_5b_config()}};
  for (const auto& [file, preset] : files) {
    INFO(file);
    const LlamaConfig c = load_llama_config(dir + file);
    CHECK(c.vocab == preset.vocab);
    CHECK(c.hidden == preset.hidden);
    CHECK(c.layers == preset.layers);
    CHECK(c.heads == preset.heads);
    CHECK(c.kv_heads == preset.kv_heads);
    CHECK(c.intermediate == preset.intermediate);
    CHECK(c.max_positions == preset.max_positions);
    CHECK(c.tied_embeddings == preset.tied_embeddings);
    CHECK(c.qkv_bias == preset.qkv_bias);
    ModelOptions o = opts_of(1, 32, Attention::SdpaFlash);
    const Graph f = build_forward_graph(dir + file, o);  // the zoo's entry point takes the path
    CHECK(summarize(f, make_training_graph(f, o.training)).params == llama_parameter_count(preset));
  }
}

TEST_CASE("a config.json that cannot be built names its file, line and field") {
  const std::string base = R"({
  "model_type": "llama",
  "hidden_size": 256,
  "intermediate_size": 512,
  "max_position_embeddings": 1024,
  "num_attention_heads": 8,
  "num_hidden_layers": 2,
  "num_key_value_heads": 3,
  "vocab_size": 1000
})";
  const ConfigError kv = load_error(base);
  CHECK(kv.key() == "num_key_value_heads");
  CHECK(kv.line() == 8);
  CHECK(std::string(kv.what()).find("bad.config.json") != std::string::npos);
  std::string heads = base;
  const std::string eight = "\"num_attention_heads\": 8";
  heads.replace(heads.find(eight), eight.size(), "\"num_attention_heads\": 7");
  CHECK(load_error(heads).key() == "num_attention_heads");
  std::string type = base;
  type.replace(type.find("llama"), 5, "gemma");
  CHECK(load_error(type).key() == "model_type");
  std::string act = base;
  act.replace(act.find("\"vocab_size\""), 0, "\"hidden_act\": \"gelu\",\n  ");
  CHECK(load_error(act).key() == "hidden_act");
  CHECK(load_error(R"({"model_type": "llama", "hidden_size": 64})").key() == "vocab_size");  // a missing field
  CHECK(load_error("{\"model_type\": \"llama\", \"vocab_size\": \"many\"}").key() == "vocab_size");
}

TEST_CASE("num_key_value_heads: null means as many as the attention heads, as transformers reads None") {
  // Issue 27: HF configs of models without grouped-query attention may write null; it was refused.
  const std::string text = R"({
  "model_type": "llama",
  "hidden_size": 256,
  "intermediate_size": 512,
  "max_position_embeddings": 1024,
  "num_attention_heads": 8,
  "num_hidden_layers": 2,
  "num_key_value_heads": null,
  "head_dim": null,
  "vocab_size": 1000
})";
  const LlamaConfig c = parse_llama_config(text, "null-kv.config.json");
  CHECK(c.heads == 8);
  CHECK(c.kv_heads == 8);
  std::string absent = text;
  absent.erase(absent.find("  \"num_key_value_heads\": null,\n"), std::string("  \"num_key_value_heads\": null,\n").size());
  CHECK(parse_llama_config(absent, "absent.config.json").kv_heads == 8);
  // A value that is no number is still refused with its line, and the model types are listed.
  std::string word = text;
  word.replace(word.find("null"), 4, "\"all\"");
  CHECK_THROWS_WITH(parse_llama_config(word, "w.json"), "w.json:8: 'num_key_value_heads': expected an integer, got 'all'");
  std::string gemma = text;
  gemma.replace(gemma.find("llama"), 5, "gemma");
  CHECK_THROWS_WITH(parse_llama_config(gemma, "g.json"),
                    "g.json:2: 'model_type': model_type 'gemma' is not built here; valid: llama, mistral, qwen2");
}

// apply_rotary_pos_emb (transformers 5's modeling_llama.py / modeling_qwen2.py) on q and on k, per layer:
//   q * cos; rotate_half(q) = cat((-q[..., d/2:], q[..., :d/2]), -1), whose slices are views; * sin; the sum.
// Forward, 5 kernels: mul, neg (half of q), cat, mul, add. Backward, from autograd's formulas
// (tools/autograd/derivatives.yaml): AddBackward0 passes the gradient through (no kernel); MulBackward0 by sin:
// grad * sin in the promoted dtype, cast to the cat's dtype by the engine's validate_outputs when narrower (2 under
// autocast, where sin is fp32 and q bf16; 1 in pure bf16); CatBackward0 narrows (no kernel); NegBackward0 a neg (1);
// each of the two SliceBackward0s zeros of q's shape and a copy into its half (2 + 2); MulBackward0 by cos (2 or
// 1); q's three gradients summed (2 accumulations). 11 kernels under autocast, 9 in bf16: the profiled H200
// Qwen2.5-0.5B step (results/fidelity/data/h200-2026-11-28/traces.tar) runs the 5 and the 11 per q and per k.
TEST_CASE("Llama's rotary as PyTorch's kernels: 5 forward, 11 backward under autocast, keeping cos and sin only") {
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 2}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", false}});
  for (Precision p : {Precision::MixedBF16, Precision::BF16}) {
    INFO(to_string(p));
    const bool autocast = p == Precision::MixedBF16;
    const ModelOptions o = opts_of(2, 32, Attention::SdpaFlash, p);
    const Graph t = make_training_graph(build_llama(c, o), o.training);
    int rotaries = 0;
    for (const std::string n : {"model.layers.0.self_attn.rotary.q", "model.layers.0.self_attn.rotary.k",
                                "model.layers.1.self_attn.rotary.q", "model.layers.1.self_attn.rotary.k"}) {
      INFO(n);
      ++rotaries;
      std::vector<std::string> fwd, bwd;
      std::set<TensorId> read_in_backward;
      for (const Op& op : t.ops()) {
        if (op.name != n && op.name.rfind(n + ".", 0) != 0) continue;
        if (op.phase == Phase::Forward) fwd.push_back(op.name.substr(n.size()));
        if (op.phase != Phase::Backward) continue;
        bwd.push_back(op.name.substr(n.size()));
        for (TensorId x : op.inputs) read_in_backward.insert(x);
      }
      CHECK(fwd == std::vector<std::string>{".mul_cos", ".neg", ".cat", ".mul_sin", ""});
      std::vector<std::string> want = {".mul_sin.bwd0", ".mul_sin.bwd_cast0", ".cat.bwd_slice.zeros",
                                       ".cat.bwd_slice.copy", ".neg.bwd", ".neg.bwd_slice.zeros",
                                       ".neg.bwd_slice.copy", ".neg.grad_acc", ".mul_cos.bwd0",
                                       ".mul_cos.bwd_cast0", ".mul_cos.grad_acc"};
      // in bf16 no cast: each product is product_backward's one kernel (".bwd")
      if (!autocast)
        want = {".mul_sin.bwd", ".cat.bwd_slice.zeros", ".cat.bwd_slice.copy", ".neg.bwd", ".neg.bwd_slice.zeros",
                ".neg.bwd_slice.copy", ".neg.grad_acc", ".mul_cos.bwd", ".mul_cos.grad_acc"};
      CHECK(bwd == want);
      CHECK(bwd.size() == (autocast ? 11u : 9u));
      // the forward's tensors the backward reads: cos and sin, no intermediate of the rotary
      for (const char* freed : {".mul_cos.out", ".neg.out", ".cat.out", ".mul_sin.out", ".out"})
        CHECK(read_in_backward.count(llama_tensor_named(t, n + freed).id) == 0);
      CHECK(read_in_backward.count(llama_tensor_named(t, "model.rotary_emb.cos").id) == 1);
      CHECK(read_in_backward.count(llama_tensor_named(t, "model.rotary_emb.sin").id) == 1);
      // the products and the sum in fp32 under autocast (cos follows the fp32 hidden states), the neg and cat in q's
      CHECK(llama_tensor_named(t, n + ".out").dtype == (autocast ? DType::F32 : DType::BF16));
      CHECK(llama_tensor_named(t, n + ".cat.out").dtype == DType::BF16);
      CHECK(llama_tensor_named(t, n + ".neg.out").shape.back() == 32 / 2);  // head_dim 32: half of it
    }
    CHECK(rotaries == 4);
    for (const Op& op : t.ops()) CHECK(op.kind != OpKind::Rotary);
  }
}

TEST_CASE("kernels: fused builds the rotary as one op on each of q and k, saving what the written-out one saves") {
  const LlamaConfig c = config_from("tiny", {{"vocab", 512}, {"hidden", 128}, {"layers", 2}, {"heads", 4},
                                             {"kv_heads", 2}, {"inner", 256}, {"tied", false}});
  ModelOptions o = opts_of(2, 32, Attention::SdpaFlash, Precision::MixedBF16);
  o.training.kernels = Kernels::Fused;
  const Graph t = make_training_graph(build_llama(c, o), o.training);
  int fwd = 0, bwd = 0;
  for (const Op& op : t.ops()) {
    fwd += op.kind == OpKind::Rotary;
    bwd += op.kind == OpKind::RotaryBwd;
    CHECK(op.other != OtherOp::NegHalf);
    CHECK(op.other != OtherOp::Fill);
  }
  CHECK(fwd == 2 * 2);
  CHECK(bwd == 2 * 2);
}
