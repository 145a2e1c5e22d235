#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include "experiment/simfuzz/simfuzz.h"
#include "policies/concurrency/concurrency_policy.h"
#include "policies/pool/pool_policy.h"
#include "policies/swap/core/swap_policy.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
std::string policy_name(const YAML::Node& n) { return n.IsMap() ? n["name"].Scalar() : n.Scalar(); }
}  // namespace

TEST_CASE("simfuzz: a seed draws the same case every time, and its file reads back to the same case") {
  for (uint64_t seed : {1u, 2u, 77u, 4096u}) {
    const FuzzCase a = generate_fuzz_case(seed);
    CHECK(to_yaml_text(a) == to_yaml_text(generate_fuzz_case(seed)));
    const FuzzCase b = fuzz_case_from_yaml(YAML::Load(to_yaml_text(a)), "<text>");
    CHECK(to_yaml_text(b) == to_yaml_text(a));
    CHECK(b.layers == a.layers);
  }
  CHECK(to_yaml_text(generate_fuzz_case(1)) != to_yaml_text(generate_fuzz_case(2)));
}

TEST_CASE("simfuzz: the cases draw every pool, swap and concurrency policy the registries hold") {
  std::set<std::string> pools, swaps, concurrency;
  std::map<std::string, int> params_drawn;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const FuzzCase c = generate_fuzz_case(seed);
    pools.insert(policy_name(c.experiment["pool"]));
    swaps.insert(policy_name(c.experiment["swap"]));
    concurrency.insert(policy_name(c.experiment["concurrency"]));
    for (const char* p : {"pool", "swap"})
      if (c.experiment[p].IsMap())
        for (const auto& kv : c.experiment[p]) ++params_drawn[policy_name(c.experiment[p]) + "." + kv.first.Scalar()];
  }
  for (const auto& e : pool_registry().entries()) CHECK(pools.count(e.name));
  for (const auto& e : swap_registry().entries()) CHECK(swaps.count(e.name));
  for (const auto& e : concurrency_registry().entries()) CHECK(concurrency.count(e.name));
  // Parameters are drawn from their declared specs: every parameter of cnmem and singa shows up.
  for (const auto& e : {pool_registry().get("cnmem"), pool_registry().get("tf-bfc")})
    for (const ParamSpec& s : e.params) CHECK(params_drawn[e.name + "." + s.name] > 0);
}

TEST_CASE("simfuzz: 200 random experiments end in a result, an out-of-memory or a ConfigError, never a violation") {
  std::map<FuzzOutcome, int> outcomes;
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    FuzzRunOptions o;
    o.check_determinism = seed % 16 == 0;
    const FuzzRun r = run_fuzz_case(generate_fuzz_case(seed), o);
    INFO("seed " << seed << ": [" << r.category << "] " << r.message);
    CHECK(r.outcome != FuzzOutcome::Violation);
    ++outcomes[r.outcome];
  }
  // The generator reaches both ends: runs that complete and runs the simulated GPU cannot hold.
  CHECK(outcomes[FuzzOutcome::Result] >= 40);
  CHECK(outcomes[FuzzOutcome::Oom] >= 10);
}

TEST_CASE("simfuzz: the shrinker keeps a failing case failing and drops everything the failure does not need") {
  FuzzCase c = generate_fuzz_case(3);
  c.layers = {{"relu", 0, 0}, {"conv", 64, 3}, {"bn", 0, 0}, {"linear", 100, 0}, {"conv", 8, 5}, {"gelu", 0, 0}};
  c.experiment["pool"] = YAML::Load("{name: cnmem, init_size_mb: 64, cannot_grow: true}");
  c.experiment["batch"] = 64;
  // "Fails" when some convolution has at least 8 output channels and cnmem's init_size_mb is set.
  auto fails = [](const FuzzCase& s) {
    bool conv = false;
    for (const FuzzLayer& l : s.layers) conv = conv || (l.kind == "conv" && l.a >= 8);
    const YAML::Node p = s.experiment["pool"];
    return conv && p.IsMap() && p["init_size_mb"];
  };
  REQUIRE(fails(c));
  const FuzzCase small = shrink_fuzz_case(c, fails);
  CHECK(fails(small));
  REQUIRE(small.layers.size() == 1);
  CHECK(small.layers[0].kind == "conv");
  CHECK(small.layers[0].a == 8);  // 64 halved down to the least that still fails
  CHECK_FALSE(small.experiment["pool"]["cannot_grow"]);
  CHECK(small.experiment["batch"].as<int64_t>() == 1);
  CHECK(policy_name(small.experiment["swap"]) == "none");
}

TEST_CASE("simfuzz: every shrunk case committed in tests/simfuzz runs without a violation") {
  const fs::path dir = fs::path(DLSIM_SOURCE_DIR) / "tests" / "simfuzz";
  int cases = 0;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() != ".yaml") continue;
    ++cases;
    FuzzRunOptions o;
    o.file = f.path().string();
    o.check_determinism = true;
    const FuzzRun r = run_fuzz_case(load_fuzz_case(o.file), o);
    INFO(f.path().filename().string() << ": " << to_string(r.outcome) << " [" << r.category << "] " << r.message);
    CHECK(r.outcome != FuzzOutcome::Violation);
  }
  CHECK(cases > 0);
}
