#include "workloads/transformer_models.h"

#include <boost/graph/topological_sort.hpp>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "workloads/training.h"
#include "workloads/zoo.h"

using namespace dlsim;

namespace {

ModelOptions opts_of(int64_t batch, int64_t seq) {
  ModelOptions o;
  // GPT-2's eager form: what validate/torch/torch_reference_transformers.py measured (BERT has no other)
  o.attention = Attention::Eager;
  o.batch = batch;
  o.seq_len = seq;
  return o;
}

struct Figures {
  uint64_t weights_in_graph = 0;  // every learnable tensor the forward graph holds
  ModelSummary summary;
};

Figures figures(const std::string& name, int64_t batch, int64_t seq) {
  Graph f = build_forward_graph(name, opts_of(batch, seq));
  Graph t = make_training_graph(f, TrainingOptions{});
  Figures r;
  for (const Tensor& w : f.tensors())
    if (w.kind == TensorKind::Weight) r.weights_in_graph += w.bytes / dtype_bytes(w.dtype);
  r.summary = summarize(f, t);
  return r;
}

nlohmann::json transformer_reference() {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_transformers.json");
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

}  // namespace

TEST_CASE("transformer parameter counts are Hugging Face's") {
  const nlohmann::json ref = transformer_reference();
  // GPT-2's LM head is tied to wte, so every parameter gets a gradient and the optimizer counts them all.
  Figures g = figures("gpt2-small", 1, 64);
  CHECK(g.summary.params == 124439808u);
  CHECK(g.weights_in_graph == 124439808u);
  CHECK(ref["models"]["gpt2-small"]["params"].get<uint64_t>() == 124439808u);
  // BERT-base holds BertModel's parameters with the pooler; summarize counts them as model.parameters() does,
  // although the masked-LM loss does not read the pooler (its 768x768+768 get no gradient and no update).
  Figures b = figures("bert-base", 1, 64);
  CHECK(b.weights_in_graph == 109482240u);
  CHECK(ref["models"]["bert-base"]["params"].get<uint64_t>() == 109482240u);
  CHECK(b.summary.params == 109482240u);
}

TEST_CASE("transformer activation memory is within 5% of what PyTorch's autograd keeps") {
  const nlohmann::json ref = transformer_reference();
  for (const std::string name : {"bert-base", "gpt2-small"}) {
    const auto& runs = ref["models"][name]["runs"];
    REQUIRE(runs.size() >= 2);
    for (const auto& run : runs) {
      int64_t batch = run["batch"].get<int64_t>(), seq = run["seq_len"].get<int64_t>();
      double torch_bytes = run["saved_for_backward_bytes"].get<double>();
      double ours = static_cast<double>(figures(name, batch, seq).summary.saved_for_backward_bytes);
      INFO(name << " batch " << batch << " seq " << seq << ": dlsim " << ours << " B, PyTorch " << torch_bytes << " B");
      CHECK(std::abs(ours / torch_bytes - 1.0) < 0.05);
    }
  }
}

TEST_CASE("transformer forward MACs follow the layer sizes") {
  // Per token: Q, K, V and output projections (4 H^2) and the MLP (2 H I) per layer, the tied vocabulary
  // projection (H V); per sequence and head: scores and context (2 S^2 d per head = 2 S^2 H per layer).
  const double b = 2, s = 128, h = 768, i = 3072, l = 12;
  double bert = b * s * (l * (4 * h * h + 2 * h * i) + h * 30522) + b * l * 2 * s * s * h + b * h * h;  // + pooler
  CHECK(figures("bert-base", 2, 128).summary.fwd_macs == Approx(bert).epsilon(1e-12));
  const double s2 = 256;
  double gpt = b * s2 * (l * (4 * h * h + 2 * h * i) + h * 50257) + b * l * 2 * s2 * s2 * h;
  CHECK(figures("gpt2-small", 2, 256).summary.fwd_macs == Approx(gpt).epsilon(1e-12));
}

TEST_CASE("transformer default sequence lengths and their limits") {
  ModelOptions o;
  o.batch = 1;
  CHECK(build_bert_base(o).tensor(0).shape == std::vector<int64_t>{1, 128});
  CHECK(build_gpt2_small(o).tensor(0).shape == std::vector<int64_t>{1, 1024});
  CHECK_THROWS_AS(build_bert_base(opts_of(1, 513)), ConfigError);   // only 512 position embeddings
  CHECK_THROWS_AS(build_gpt2_small(opts_of(1, 1025)), ConfigError);
  CHECK_THROWS_AS(build_bert_base(opts_of(1, -4)), ConfigError);
  try {
    build_gpt2_small(opts_of(1, 2048));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "seq_len");
    CHECK(std::string(e.what()).find("1024") != std::string::npos);
  }
}

TEST_CASE("transformer training graphs are valid DAGs in issue order, also under mixed precision") {
  for (Precision p : {Precision::FP32, Precision::MixedBF16}) {
    ModelOptions o = opts_of(2, 32);
    o.training.precision = p;
    for (const std::string name : {"bert-base", "gpt2-small"}) {
      INFO(name);
      Graph t = build_training_graph(name, o);
      Graph::Dag d = t.dag();
      std::vector<size_t> topo;
      REQUIRE_NOTHROW(boost::topological_sort(d, std::back_inserter(topo)));
      auto [ei, ee] = boost::edges(d);
      for (; ei != ee; ++ei) REQUIRE(boost::source(*ei, d) < boost::target(*ei, d));
      size_t bwd = 0;
      for (const Op& op : t.ops()) bwd += op.phase == Phase::Backward;
      CHECK(bwd > 12 * 10);  // every layer differentiated
    }
  }
}
