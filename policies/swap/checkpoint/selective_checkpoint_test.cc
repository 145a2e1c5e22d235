// Selective checkpointing (`checkpoint` with `selective: op` or `selective: N`): torchtitan's per-op policy on a
// small Llama worked by hand (what is saved, dropped, held and replayed), its bytes against PyTorch's own SAC
// (workloads/testdata/torch_sac.json, measured by validate/torch/torch_sac_bytes.py with PyTorch 2.11 on the CPU),
// per-layer SAC, and bad parameters.
#include "policies/swap/checkpoint/selective_checkpoint.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/config_error.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/core/saved_bytes.h"
#include "policies/swap/testing/swap_graphs.h"
#include "workloads/llama_models.h"
#include "workloads/model_builder.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

// torch_reference_llama.py's scaled-down Llamas as torch_sac_bytes.py runs them (fp32, FlashAttention, batch 2,
// 64 positions).
Graph tiny_llama(int64_t hidden, int64_t layers, int64_t heads, int64_t kv_heads, int64_t inner, int64_t vocab) {
  LlamaConfig c;
  c.name = "tiny";
  c.vocab = vocab;
  c.hidden = hidden;
  c.layers = layers;
  c.heads = heads;
  c.kv_heads = kv_heads;
  c.intermediate = inner;
  c.max_positions = 128;
  ModelOptions mo;
  mo.batch = 2;
  mo.seq_len = 64;
  return make_training_graph(build_llama(c, mo), mo.training);
}

Graph tiny_mha() { return tiny_llama(256, 3, 8, 8, 688, 512); }

std::vector<std::string> op_names(const Graph& g, const std::vector<OpId>& ops) {
  std::vector<std::string> v;
  for (OpId o : ops) v.push_back(g.op(o).name);
  return v;
}

std::vector<std::string> tensor_names(const Graph& g, const std::vector<TensorId>& ts) {
  std::vector<std::string> v;
  for (TensorId t : ts) v.push_back(g.tensor(t).name);
  return v;
}

std::vector<OpId> order_of(const Graph& g) {
  std::vector<OpId> order;
  for (const Op& o : g.ops()) order.push_back(o.id);
  return order;
}

CheckpointOptions selective(const std::string& s) {
  CheckpointOptions o;
  o.selective = s;
  return o;
}

SwapPlan plan_of(const Graph& g, const CheckpointOptions& o) {
  const std::vector<CheckpointSegment> segs = checkpoint_segments(g, o);
  return checkpoint_plan(g, order_of(g), segs, true, checkpoint_saved_ops(g, o, segs));
}

}  // namespace

TEST_CASE("selective: the option's values") {
  CHECK(parse_selective("")->mode == SelectiveCheckpointing::Mode::Full);
  CHECK(parse_selective("op")->mode == SelectiveCheckpointing::Mode::Op);
  CHECK(parse_selective("2")->mode == SelectiveCheckpointing::Mode::Layer);
  CHECK(parse_selective("2")->layer_every == 2);
  for (const char* bad : {"0", "02", "-1", "op2", "Op", "1.5", "1234567890"}) CHECK_FALSE(parse_selective(bad));
  CHECK(layer_policy_blocks(5, 2) == std::vector<int64_t>{1, 3});
  CHECK(layer_policy_blocks(3, 1) == std::vector<int64_t>{0, 1, 2});
  CHECK(layer_policy_blocks(3, 4).empty());
}

TEST_CASE("selective: bad values name the file, the line and the key") {
  const auto specs = CheckpointOptions::parameters().specs();
  auto message = [&](const std::string& yaml) {
    try {
      params_from_yaml(specs, YAML::Load(yaml), "exp.yaml", "checkpoint", "swap");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message("name: checkpoint\nselective: ops\n"),
             Catch::Contains("exp.yaml:2") && Catch::Contains("swap.selective") && Catch::Contains("op, or a positive integer"));
  CHECK_THAT(message("name: checkpoint\nevery: 1\nselective: 0\n"), Catch::Contains("exp.yaml:3") && Catch::Contains("swap.selective"));
  CHECK(message("name: checkpoint\nselective: op\n") == "no error");
  // Per-layer SAC chooses its blocks itself: every or segments beside it is an error naming selective.
  const Graph g = tiny_mha();
  CheckpointOptions o = selective("2");
  o.every = 2;
  CHECK_THROWS_WITH(checkpoint_segments(g, o), Catch::Contains("selective") && Catch::Contains("leave every at 1"));
  o.every = 1;
  o.segments = "0-1";
  CHECK_THROWS_WITH(checkpoint_segments(g, o), Catch::Contains("selective"));
}

TEST_CASE("selective op on a Llama block: q, v, gate and down projections and attention saved") {
  const Graph g = tiny_mha();
  const std::vector<CheckpointSegment> segs = checkpoint_segments(g, selective("op"));
  REQUIRE(segs.size() == 3);
  const std::string p = "model.layers.1.", a = p + "self_attn.";
  // The block's mm calls in forward order: q, k, v, o, gate, up, down: the 1st, 3rd, 5th and 7th are saved.
  CHECK(op_names(g, op_policy_saved_ops(g, segs[1])) ==
        std::vector<std::string>{a + "q_proj", a + "v_proj", a + "sdpa", p + "mlp.gate_proj", p + "mlp.down_proj"});
  // A biased projection (Qwen2's q/k/v) is addmm, not on the list: the count goes on from the o projection.
  ModelBuilder b("biased", 1);
  TensorId x = b.input({1, 8}, DType::F32, "x");
  b.begin_block("b0");
  x = b.linear(b.linear(b.linear(x, 8, true, "addmm"), 8, false, "mm1"), 8, false, "mm2");
  b.end_block();
  b.cross_entropy_loss(x, "loss");
  const Graph bg = make_training_graph(b.finish(), TrainingOptions{});
  const std::vector<CheckpointSegment> bsegs = checkpoint_segments(bg, selective("op"));
  CHECK(op_names(bg, op_policy_saved_ops(bg, bsegs[0])) == std::vector<std::string>{"mm1"});
}

// tiny-mha, fp32, batch 2 x 64 positions, hidden 256, 8 heads of 32, MLP 688. A = 2 x 64 x 256 x 4 = 131,072 bytes
// (a hidden state), F = 2 x 64 x 688 x 4 = 352,256 (an MLP activation), L = 2 x 8 x 64 x 4 = 4,096 (attention's
// log-sum-exp).
TEST_CASE("selective op on tiny-mha worked by hand: drops, held cache, replay and bytes") {
  constexpr uint64_t A = 131072, F = 352256, L = 4096;
  const Graph g = tiny_mha();
  const std::vector<OpId> order = order_of(g);
  const SwapPlan plan = plan_of(g, selective("op"));
  REQUIRE(plan.recomputations.size() == 3);
  const Recomputation& r = plan.recomputations[1];
  const std::string p = "model.layers.1.", a = p + "self_attn.";
  // What the layer's backward reads and the policy does not save: both RMSNorms' outputs, their rstd and
  // normalised x, the rotated q and k, the attention residual, SiLU's and the up projection's outputs and their
  // product. (The views of q, k, V and the attention output are dlsim's aliases of their operands: nothing to
  // drop or re-run; attention reads the saved V projection itself.)
  CHECK(tensor_names(g, [&] {
          std::vector<TensorId> v;
          for (const auto& d : r.drops) v.push_back(d.tensor);
          return v;
        }()) == std::vector<std::string>{p + "input_layernorm.rstd", p + "input_layernorm.normalized",
                                         p + "input_layernorm.out", a + "rotary.q.out", a + "rotary.k.out",
                                         p + "attn.residual.out", p + "post_attention_layernorm.rstd",
                                         p + "post_attention_layernorm.normalized", p + "post_attention_layernorm.out",
                                         p + "mlp.act_fn.out",
                                         p + "mlp.up_proj.out", p + "mlp.gate_up.out"});
  // The cache: the saved ops' outputs, kept from the forward pass to the replay.
  CHECK(tensor_names(g, r.held) == std::vector<std::string>{a + "q_proj.out", a + "v_proj.out", a + "sdpa.out",
                                                            a + "sdpa.logsumexp", p + "mlp.gate_proj.out",
                                                            p + "mlp.down_proj.out"});
  // The replay: every op but the saved ones, up to the down projection (the last op whose backward reads a saved
  // tensor: early stop), so the MLP residual is not run; three of the seven projections (k, o, up), as PyTorch's
  // recomputation runs three aten.mm per layer (torch_sac.json).
  // Each RMSNorm is its six ops (pow, mean, + eps, rsqrt, x * rstd, the weight's product).
  auto norm = [](const std::string& n) {
    return std::vector<std::string>{n + ".pow", n + ".mean", n + ".add_eps", n + ".rsqrt", n + ".mul_rstd", n};
  };
  // Each rotary is its five ops (the product by cos, neg, cat, the product by sin, the sum).
  auto rotary = [](const std::string& n) {
    return std::vector<std::string>{n + ".mul_cos", n + ".neg", n + ".cat", n + ".mul_sin", n};
  };
  std::vector<std::string> replay = norm(p + "input_layernorm");
  replay.push_back(a + "k_proj");
  for (const std::string& r : {a + "rotary.q", a + "rotary.k"})
    for (const std::string& op : rotary(r)) replay.push_back(op);
  for (const std::string& op : {a + "o_proj", p + "attn.residual"}) replay.push_back(op);
  for (const std::string& op : norm(p + "post_attention_layernorm")) replay.push_back(op);
  for (const std::string& op : {p + "mlp.act_fn", p + "mlp.up_proj", p + "mlp.gate_up"}) replay.push_back(op);
  CHECK(op_names(g, r.ops) == replay);
  // Against whole-layer checkpointing the forward pass leaves each layer's cache more: q, v, the attention output
  // and the down projection (4 A), the gate projection (F) and the log-sum-exp (L), three layers of it.
  const SavedBytes sac = saved_bytes(g, order, plan);
  const SavedBytes full = saved_bytes(g, order, plan_of(g, CheckpointOptions{}));
  CHECK(sac.saved_for_backward_bytes - full.saved_for_backward_bytes == 3 * (4 * A + F + L));
  CHECK(sac.saved_for_backward_bytes < saved_bytes(g, order, {}).saved_for_backward_bytes);
}

TEST_CASE("selective op and whole-layer checkpointing against PyTorch's own, within 1 %") {
  std::ifstream in(std::string(DLSIM_SOURCE_DIR) + "/workloads/testdata/torch_sac.json");
  REQUIRE(in);
  const nlohmann::json ref = nlohmann::json::parse(in);
  int compared = 0;
  for (const auto& run : ref["runs"]) {
    const auto& c = run["config"];
    REQUIRE(run["batch"] == 2);
    REQUIRE(run["seq_len"] == 64);
    const Graph g = tiny_llama(c["hidden"], c["layers"], c["heads"], c["kv_heads"], c["inner"], c["vocab"]);
    const std::string mode = run["checkpoint"];
    const SwapPlan plan = mode.empty() ? SwapPlan{} : plan_of(g, selective(mode == "op" ? "op" : ""));
    const SavedBytes s = saved_bytes(g, order_of(g), plan);
    const double want_saved = run["saved_for_backward_bytes"], want_peak = run["backward_peak_saved_bytes"];
    INFO(run["model"] << " " << mode << ": saved " << s.saved_for_backward_bytes << " vs " << want_saved << ", peak "
                      << s.backward_peak_saved_bytes << " vs " << want_peak);
    CHECK(static_cast<double>(s.saved_for_backward_bytes) == Approx(want_saved).epsilon(0.01));
    CHECK(static_cast<double>(s.backward_peak_saved_bytes) == Approx(want_peak).epsilon(0.01));
    if (mode == "op") {  // the projections replayed: PyTorch's recomputed aten.mm calls
      int64_t mm = 0;
      for (const Recomputation& r : plan.recomputations)
        for (OpId o : r.ops) mm += is_aten_mm(g.op(o));
      CHECK(mm == run["recomputed"]["aten.mm.default"].get<int64_t>());
    }
    ++compared;
  }
  CHECK(compared == 6);  // two models, each without, whole-layer and op
}

TEST_CASE("selective N checkpoints every N-th block whole, the others not") {
  const Graph g = tiny_mha();
  const std::vector<CheckpointSegment> segs = checkpoint_segments(g, selective("2"));
  REQUIRE(segs.size() == 1);  // of blocks 0..2, block 1
  for (OpId o : segs[0]) CHECK(g.op(o).block == 1);
  CHECK(checkpoint_saved_ops(g, selective("2"), segs).empty());  // whole blocks: nothing saved
  const std::vector<CheckpointSegment> all = checkpoint_segments(g, selective("1"));
  const std::vector<CheckpointSegment> every1 = checkpoint_segments(g, CheckpointOptions{});
  CHECK(all == every1);
  const std::vector<OpId> order = order_of(g);
  const uint64_t none = saved_bytes(g, order, {}).saved_for_backward_bytes;
  const uint64_t layer2 = saved_bytes(g, order, plan_of(g, selective("2"))).saved_for_backward_bytes;
  const uint64_t full = saved_bytes(g, order, plan_of(g, CheckpointOptions{})).saved_for_backward_bytes;
  CHECK(full < layer2);
  CHECK(layer2 < none);
}
