// The rank-local graph of dlsim's own Llama graph against PyTorch's accounting of the same model: the Llama-3-8B
// config shrunk as validate/torch/torch_distributed_memory.py shrinks it (2 layers, hidden 64, 4 heads, 1 KV head,
// intermediate 176, vocab 512, float32), whose FSDP2 and DDP bytes per rank are committed in
// validate/torch/testdata/distributed_memory/ (FSDP2 with a bf16 MixedPrecisionPolicy in its fsdp-bf16 files).
// model_state_sharding_test.cc checks the sharding rules on the
// fixture's own parameter list; this checks that the graph dlsim builds and shards gives the same bytes.
#include "parallel/rank_local_graph.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "workloads/llama_models.h"
#include "workloads/training.h"

using namespace dlsim;
using namespace dlsim::parallel;
using nlohmann::json;

namespace {

json torch_fixture(const std::string& name) {
  std::ifstream in(std::filesystem::path(DLSIM_SOURCE_DIR) / "validate/torch/testdata/distributed_memory" / name);
  REQUIRE(in.good());
  return json::parse(in);
}

Graph tiny_llama_training_graph(const json& fixture, Precision precision = Precision::FP32) {
  const json& o = fixture.at("model_description").at("overrides");
  LlamaConfig c;
  c.name = "tiny-llama";
  c.vocab = o.at("vocab_size");
  c.hidden = o.at("hidden_size");
  c.layers = o.at("num_hidden_layers");
  c.heads = o.at("num_attention_heads");
  c.kv_heads = o.at("num_key_value_heads");
  c.intermediate = o.at("intermediate_size");
  c.max_positions = o.at("max_position_embeddings");
  ModelOptions m;
  m.batch = fixture.at("model_description").at("batch");
  m.seq_len = fixture.at("model_description").at("seq_len");
  m.training.optimizer = Optimizer::AdamW;
  m.training.precision = precision;
  return make_training_graph(build_llama(c, m), m.training);
}

uint64_t sum_named(const Graph& g, const std::string& suffix) {
  uint64_t b = 0;
  for (const Tensor& t : g.tensors())
    if (t.name.size() > suffix.size() && t.name.ends_with(suffix)) b += t.bytes;
  return b;
}

}  // namespace

TEST_CASE("dlsim's tiny Llama under FSDP2 on 2 and 4 ranks: rank 0's bytes are PyTorch's") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    const json f = torch_fixture("llama-fsdp-w" + std::to_string(world) + "-torch2.11.0.json");
    ParallelLayout p;
    p.layout = Layout::Fsdp;
    p.ranks = world;
    const RankLocalGraph r = rank_local_graph(tiny_llama_training_graph(f), p);
    const json& rank0 = f.at("ranks").at(0);
    CHECK(sum_named(r.graph, ".shard") == rank0.at("param_bytes").at("storage").get<uint64_t>());
    CHECK(sum_named(r.graph, ".grad_shard") == rank0.at("grad_bytes").at("storage").get<uint64_t>());
    CHECK(sum_named(r.graph, ".exp_avg") == rank0.at("optimizer_state_bytes").at("exp_avg").at("logical").get<uint64_t>());
    CHECK(sum_named(r.graph, ".exp_avg_sq") ==
          rank0.at("optimizer_state_bytes").at("exp_avg_sq").at("logical").get<uint64_t>());
    // Each unit's gathered bytes (padded storage), by the unit names FSDP2's modules have.
    const json& units = rank0.at("unsharded_per_unit");
    size_t gathers = 0;
    for (const CollectiveSite& c : r.collectives) {
      if (c.kind != CollectiveKind::AllGather || c.outputs.empty() || r.graph.tensor(c.outputs[0]).name.ends_with(".regathered"))
        continue;
      ++gathers;
      INFO("unit " << c.unit);
      REQUIRE(units.contains(c.unit));
      CHECK(c.bytes == units.at(c.unit).at("storage").get<uint64_t>());
    }
    CHECK(gathers == units.size());
  }
}

TEST_CASE("dlsim's tiny Llama under DDP on 2 and 4 ranks: the buckets are PyTorch's") {
  for (int world : {2, 4}) {
    CAPTURE(world);
    const json f = torch_fixture("llama-ddp-w" + std::to_string(world) + "-torch2.11.0.json");
    ParallelLayout p;
    p.layout = Layout::Ddp;
    p.ranks = world;
    const RankLocalGraph r = rank_local_graph(tiny_llama_training_graph(f), p);
    std::vector<uint64_t> ours, theirs;
    for (const Tensor& t : r.graph.tensors())
      if (t.name.starts_with("ddp.bucket.")) ours.push_back(t.bytes);
    for (const json& b : f.at("ranks").at(0).at("buckets_step2")) theirs.push_back(b.at("bytes"));
    CHECK(ours == theirs);
    CHECK(sum_named(r.graph, ".exp_avg") == f.at("total_param_bytes").get<uint64_t>());
  }
}

TEST_CASE("dlsim's tiny Llama under FSDP2 with MixedPrecisionPolicy(bf16, fp32): PyTorch's bytes and dtypes") {
  // PyTorch: fully_shard(mp_policy=MixedPrecisionPolicy(param_dtype=bfloat16, reduce_dtype=float32)) on the fp32
  // model, no autocast. dlsim: the model built in bf16, its shards kept fp32 (experiment/parallel_precision.h).
  for (int world : {2, 4}) {
    CAPTURE(world);
    const json f = torch_fixture("llama-fsdp-bf16-w" + std::to_string(world) + "-torch2.11.0.json");
    ParallelLayout p;
    p.layout = Layout::Fsdp;
    p.ranks = world;
    p.param_dtype = DType::BF16;
    p.reduce_dtype = DType::F32;
    p.shard_dtype = DType::F32;
    const RankLocalGraph r = rank_local_graph(tiny_llama_training_graph(f, Precision::BF16), p);
    const json& rank0 = f.at("ranks").at(0);
    REQUIRE(rank0.at("param_dtypes") == json::array({"float32"}));
    REQUIRE(rank0.at("grad_dtypes") == json::array({"float32"}));
    CHECK(sum_named(r.graph, ".shard") == rank0.at("param_bytes").at("storage").get<uint64_t>());
    CHECK(sum_named(r.graph, ".grad_shard") == rank0.at("grad_bytes").at("storage").get<uint64_t>());
    CHECK(sum_named(r.graph, ".exp_avg") == rank0.at("optimizer_state_bytes").at("exp_avg").at("logical").get<uint64_t>());
    CHECK(sum_named(r.graph, ".exp_avg_sq") ==
          rank0.at("optimizer_state_bytes").at("exp_avg_sq").at("logical").get<uint64_t>());
    const json& units = rank0.at("unsharded_per_unit");
    size_t gathers = 0;
    for (const CollectiveSite& c : r.collectives) {
      if (c.kind != CollectiveKind::AllGather || c.outputs.empty() || r.graph.tensor(c.outputs[0]).name.ends_with(".regathered"))
        continue;
      ++gathers;
      INFO("unit " << c.unit);
      REQUIRE(units.contains(c.unit));
      CHECK(c.bytes == units.at(c.unit).at("storage").get<uint64_t>());
      for (TensorId t : c.outputs) CHECK(r.graph.tensor(t).dtype == DType::BF16);
    }
    CHECK(gathers == units.size());
    // Each decoder layer returns bf16 hidden states of PyTorch's bytes: its last forward op's output.
    for (size_t b = 0; b < r.graph.blocks.size(); ++b) {
      INFO("block " << r.graph.blocks[b]);
      OpId last = -1;
      for (const Op& o : r.graph.ops())
        if (o.phase == Phase::Forward && o.block == static_cast<int32_t>(b)) last = o.id;
      REQUIRE(last >= 0);
      const json& out = rank0.at("unit_outputs").at(r.graph.blocks[b]);
      REQUIRE(out.at("dtype") == "bfloat16");
      const Tensor& y = r.graph.tensor(r.graph.op(last).outputs.at(0));
      CHECK(y.dtype == DType::BF16);
      CHECK(y.bytes == out.at("bytes").get<uint64_t>());
    }
  }
}
