#include "parallel/model_state_sharding.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "common/config_error.h"

using namespace dlsim;
using namespace dlsim::parallel;

namespace {

// Linear(256, 1024) -> ReLU -> Linear(1024, 257), float32, in registration order.
std::vector<ModelParameter> mlp() {
  return {{"fc1.weight", {1024, 256}, "float32", 4, "fc1"},
          {"fc1.bias", {1024}, "float32", 4, "fc1"},
          {"fc2.weight", {257, 1024}, "float32", 4, "fc2"},
          {"fc2.bias", {257}, "float32", 4, "fc2"}};
}

std::vector<size_t> identity(size_t n) {
  std::vector<size_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

TEST_CASE("the two-layer MLP by hand: DDP buckets and replicas") {
  const auto params = mlp();
  // fc1.weight 1024*256*4 = 1048576, fc1.bias 4096, fc2.weight 257*1024*4 = 1052672, fc2.bias 1028: 2106372 in all.
  const auto buckets = ddp_rebuilt_buckets(params, gradient_ready_order(4, identity(4)));
  REQUIRE(buckets.size() == 2);
  // ready order fc2.bias, fc2.weight: 1028 + 1052672 = 1053700 >= 1 MiB closes the first bucket
  CHECK(buckets[0].bytes == 1053700);
  CHECK(buckets[0].parameters == std::vector<size_t>{3, 2});
  // the rest, 4096 + 1048576 = 1052672, stays under 25 MiB
  CHECK(buckets[1].bytes == 1052672);
  CHECK(buckets[1].parameters == std::vector<size_t>{1, 0});
  const RankModelState s = ddp_rank_state(params);
  CHECK(s.params.logical == 2106372);
  CHECK(s.grads.storage == 2106372);
  CHECK(s.exp_avg_sq.logical == 2106372);
  CHECK(s.step.logical == 16);  // four float32 scalars
}

TEST_CASE("the two-layer MLP by hand: FSDP2 shards") {
  const auto params = mlp();
  // world 2: fc1 splits 512 + 512 rows; fc2's 257 rows into chunks of 129: rank 1 holds 128 rows, storage 129.
  const FsdpRankState r1 = fsdp_rank_state(params, 2, 1);
  CHECK(r1.shards[2].local_rows == 128);
  CHECK(r1.state.params.logical == 524288 + 2048 + 128 * 4096 + 128 * 4);  // 1051136
  CHECK(r1.state.params.storage == 524288 + 2048 + 129 * 4096 + 129 * 4);  // 1055236
  CHECK(r1.state.grads.storage == 1055236);
  CHECK(r1.state.exp_avg.storage == 1051136);  // AdamW's state is not padded
  REQUIRE(r1.units.size() == 2);
  CHECK(r1.units[1].unit == "fc2");
  CHECK(r1.units[1].bytes.logical == 1053700);
  CHECK(r1.units[1].bytes.storage == 258 * 4096 + 258 * 4);  // 1057800
  // world 4: chunks of 65 rows of fc2; rank 3 holds 257 - 3 * 65 = 62
  const FsdpRankState r3 = fsdp_rank_state(params, 4, 3);
  CHECK(r3.state.params.logical == 262144 + 1024 + 62 * 4096 + 62 * 4);  // 517368
  CHECK(r3.state.params.storage == 262144 + 1024 + 65 * 4096 + 65 * 4);  // 529668
  CHECK(r3.state.step.storage == 16);
}

TEST_CASE("rules past the fixtures: exact cap, dtypes apart, ranks past the last row, bad input") {
  // A bucket that reaches the cap exactly closes (PyTorch compares with >=); no fixture lands on it.
  std::vector<ModelParameter> p = {{"a", {256, 1024}, "float32", 4, "u"},   // exactly 1 MiB
                                   {"b", {1024}, "bfloat16", 2, "u"},
                                   {"c", {8}, "float32", 4, "u"}};
  const auto buckets = ddp_rebuilt_buckets(p, identity(3));
  REQUIRE(buckets.size() == 3);
  CHECK(buckets[0].parameters == std::vector<size_t>{0});
  CHECK(buckets[1].dtype == "float32");  // the float32 bucket opened first is listed first among open ones
  CHECK(buckets[1].parameters == std::vector<size_t>{2});
  CHECK(buckets[2].bytes == 2048);
  // 3 rows over 4 ranks: chunks of 1 row, rank 3 holds none but keeps one padded row
  const FsdpLocalShard s = fsdp_local_shard({"x", {3, 10}, "float32", 4, "u"}, 4, 3);
  CHECK(s.local_rows == 0);
  CHECK(s.local_bytes == 0);
  CHECK(s.storage_bytes == 40);
  // a scalar is one row
  CHECK(fsdp_local_shard({"s", {}, "float32", 4, "u"}, 2, 0).local_bytes == 4);
  CHECK_THROWS_AS(fsdp_rank_state(p, 2, 2), ConfigError);
  CHECK_THROWS_AS(fsdp_rank_state(p, 0, 0), ConfigError);
  CHECK_THROWS_AS(gradient_ready_order(3, {0, 0, 1}), ConfigError);
  CHECK_THROWS_AS(ddp_rebuilt_buckets(p, {0, 1}), ConfigError);
}

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

int64_t element_bytes(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "bfloat16" || dtype == "float16") return 2;
  FAIL("no element size for dtype " << dtype);
  return 0;
}

// The FSDP units the recording script wraps: each MLP layer, and for Llama each decoder layer plus the root.
std::string unit_of(const std::string& model, const std::string& name) {
  if (model == "mlp") return name.substr(0, name.find('.'));
  if (name.rfind("model.layers.", 0) == 0) return name.substr(0, name.find('.', std::string("model.layers.").size()));
  return "(root)";
}

// Where forward first uses each parameter: MLP in registration order; Llama (transformers' LlamaModel.forward and
// LlamaDecoderLayer.forward) embeds, then per layer input norm, q, k, v, o, post-attention norm, gate, up, down,
// then the final norm and lm_head.
std::vector<size_t> forward_use_order(const std::string& model, const std::vector<ModelParameter>& params) {
  if (model == "mlp") return identity(params.size());
  static const std::vector<std::string> in_layer = {
      "input_layernorm.weight", "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
      "self_attn.o_proj.weight", "post_attention_layernorm.weight", "mlp.gate_proj.weight", "mlp.up_proj.weight",
      "mlp.down_proj.weight"};
  auto key = [&](const std::string& n) -> std::tuple<int, int, int> {
    if (n == "model.embed_tokens.weight") return {0, 0, 0};
    if (n == "model.norm.weight") return {2, 0, 0};
    if (n == "lm_head.weight") return {3, 0, 0};
    const std::string layer = unit_of("llama", n);
    const std::string rest = n.substr(layer.size() + 1);
    const auto at = std::find(in_layer.begin(), in_layer.end(), rest);
    if (layer == "(root)" || at == in_layer.end()) FAIL("no forward position for " << n);
    return {1, std::stoi(layer.substr(std::string("model.layers.").size())), int(at - in_layer.begin())};
  };
  std::vector<size_t> order = identity(params.size());
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return key(params[a].name) < key(params[b].name); });
  return order;
}

struct Tally {
  int numbers = 0;
  void same(int64_t actual, const json& expected, const std::string& what) {
    INFO(what);
    CHECK(actual == expected.get<int64_t>());
    ++numbers;
  }
  void same(const Bytes& actual, const json& expected, const std::string& what) {
    same(actual.logical, expected.at("logical"), what + ".logical");
    same(actual.storage, expected.at("storage"), what + ".storage");
  }
  void same(const RankModelState& s, const json& rank, const std::string& where) {
    same(s.params, rank.at("param_bytes"), where + " param_bytes");
    same(s.grads, rank.at("grad_bytes"), where + " grad_bytes");
    const json& opt = rank.at("optimizer_state_bytes");
    same(s.exp_avg, opt.at("exp_avg"), where + " exp_avg");
    same(s.exp_avg_sq, opt.at("exp_avg_sq"), where + " exp_avg_sq");
    same(s.step, opt.at("step"), where + " step");
  }
};

void check_ddp(const json& f, const std::vector<ModelParameter>& params, const std::string& file, Tally& t) {
  const auto ready = gradient_ready_order(params.size(), forward_use_order(f.at("model"), params));
  const auto buckets = ddp_rebuilt_buckets(params, ready);
  const RankModelState state = ddp_rank_state(params);
  for (const json& rank : f.at("ranks")) {
    const std::string where = file + " rank " + std::to_string(rank.at("rank").get<int>());
    const json& expected = rank.at("buckets_step2");
    REQUIRE(buckets.size() == expected.size());
    for (size_t b = 0; b < buckets.size(); ++b) {
      const std::string what = where + " bucket " + std::to_string(b);
      t.same(buckets[b].bytes, expected[b].at("bytes"), what + " bytes");
      CHECK(buckets[b].dtype == expected[b].at("dtype").get<std::string>());
      std::vector<std::string> names;
      for (size_t i : buckets[b].parameters) names.push_back(params[i].name);
      INFO(what);
      CHECK(names == expected[b].at("parameters").get<std::vector<std::string>>());
    }
    t.same(state, rank, where);
  }
}

// bf16_gather: FSDP2's MixedPrecisionPolicy(param_dtype=bfloat16): the shards as the parameters' own dtype, the
// units gathered in bf16.
void check_fsdp(const json& f, const std::vector<ModelParameter>& params, const std::string& file, Tally& t,
                bool bf16_gather) {
  const int world = f.at("world_size");
  std::vector<ModelParameter> gathered = params;
  if (bf16_gather)
    for (ModelParameter& p : gathered) {
      p.dtype = "bfloat16";
      p.element_bytes = 2;
    }
  for (const json& rank : f.at("ranks")) {
    const int r = rank.at("rank");
    const std::string where = file + " rank " + std::to_string(r);
    const FsdpRankState s = fsdp_rank_state(params, world, r);
    t.same(s.state, rank, where);
    const json& shards = rank.at("parameters");
    REQUIRE(shards.size() == params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string what = where + " " + params[i].name;
      REQUIRE(shards[i].at("name") == params[i].name);
      t.same(s.shards[i].local_rows, shards[i].at("local_shape").at(0), what + " local rows");
      t.same(s.shards[i].local_bytes, shards[i].at("local_bytes"), what + " local_bytes");
      t.same(s.shards[i].local_bytes, shards[i].at("grad_local_bytes"), what + " grad_local_bytes");
      t.same(s.shards[i].storage_bytes, shards[i].at("storage_bytes"), what + " storage_bytes");
    }
    const json& units = rank.at("unsharded_per_unit");
    REQUIRE(units.size() == s.units.size());
    for (const FsdpUnitGather& u : fsdp_rank_state(gathered, world, r).units) {
      INFO(where + " unit " + u.unit);
      REQUIRE(units.contains(u.unit));
      t.same(u.bytes, units.at(u.unit), where + " unit " + u.unit);
    }
  }
}

}  // namespace

TEST_CASE("DDP buckets and FSDP2 shards match PyTorch's accounting in the committed fixtures") {
  const fs::path dir = fs::path(DLSIM_SOURCE_DIR) / "validate/torch/testdata/distributed_memory";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Tally t;
  std::set<std::string> covered;  // model-layout-world
  for (const fs::path& path : files) {
    const std::string file = path.filename().string();
    INFO(file);
    std::ifstream in(path);
    const json f = json::parse(in);
    REQUIRE(f.at("format") == "dlsim-torch-distributed-memory");
    const std::string model = f.at("model");
    std::vector<ModelParameter> params;
    int64_t total = 0;
    for (const json& p : f.at("parameters")) {
      params.push_back({p.at("name"), p.at("shape").get<std::vector<int64_t>>(), p.at("dtype"),
                        element_bytes(p.at("dtype")), unit_of(model, p.at("name"))});
      t.same(parameter_bytes(params.back()), p.at("bytes"), file + " " + params.back().name + " bytes");
      total += parameter_bytes(params.back());
    }
    t.same(total, f.at("total_param_bytes"), file + " total_param_bytes");
    const std::string layout = f.at("layout");
    REQUIRE((layout == "ddp" || layout == "fsdp" || layout == "fsdp-bf16"));
    if (layout == "ddp") check_ddp(f, params, file, t);
    else check_fsdp(f, params, file, t, layout == "fsdp-bf16");
    covered.insert(model + "-" + layout + "-w" + std::to_string(f.at("world_size").get<int>()));
  }
  // every model, layout and world size the issue names is there (a lost fixture must not pass silently)
  for (const char* m : {"mlp", "llama"})
    for (const char* l : {"ddp", "fsdp", "fsdp-bf16"})
      for (const char* w : {"2", "4"}) CHECK(covered.count(std::string(m) + "-" + l + "-w" + w) == 1);
  std::cout << "model_state_sharding: " << t.numbers << " numbers checked in " << files.size() << " fixture files\n";
}
