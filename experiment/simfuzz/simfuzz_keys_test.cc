// The simulation fuzzer's key and flag checks, and the draws that exercise them: lists in hw_override, limits
// that round to nothing.
#include "experiment/simfuzz/simfuzz_keys.h"

#include <catch2/catch.hpp>

#include "experiment/simfuzz/simfuzz_case.h"

using namespace dlsim;

namespace {
Experiment keys_experiment(const std::string& yaml) { return experiment_from_yaml(YAML::Load(yaml), "test.yaml"); }
}  // namespace

TEST_CASE("simfuzz keys: an experiment with lists and odd text in hw_override has an exact key") {
  const Experiment e = keys_experiment(
      "{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, hw_override: "
      "{pcie: {latency_us: 3}, kernel_times: [{signature: 'a,b=\"c\"', ns: 5}, {signature: \"x;y|z\", ns: 7}]}}");
  CHECK_FALSE(check_sweep_key(e));
  // A line break is no part of a name: such an override is refused, not keyed (common/yaml_reader.h).
  CHECK_THROWS_WITH(keys_experiment("{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial, "
                        "hw_override: {kernel_times: [{signature: \"x\\ny\", ns: 7}]}}"),
                    Catch::Contains("a control character (U+000A)"));
}

TEST_CASE("simfuzz keys: swap flags that disagree with their numbers are found") {
  const Experiment e = keys_experiment("{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: cnmem, concurrency: serial, "
                           "swap: {name: singa, limit_fraction: 1e-12}}");
  nlohmann::json f = {{"swap_target_bytes", 0}, {"swap_limit_met", true}, {"swap_bound_applies", true}};
  CHECK_THAT(*check_swap_flags(e, f, 1000), Catch::Contains("target is 0 bytes"));
  f["swap_target_bytes"] = 1;
  CHECK_THAT(*check_swap_flags(e, f, 1000), Catch::Contains("swap_limit_met is true"));
  f["swap_limit_met"] = false;
  CHECK_THAT(*check_swap_flags(e, f, 1000), Catch::Contains("missed its target"));
  f["swap_bound_applies"] = false;
  CHECK_FALSE(check_swap_flags(e, f, 1000));
  f["swap_gap_to_bound"] = 0.5;
  CHECK_THAT(*check_swap_flags(e, f, 1000), Catch::Contains("does not apply"));
  f = {{"swap_target_bytes", 2000}, {"swap_limit_met", true}, {"swap_bound_applies", true}, {"swap_gap_to_bound", -0.1}};
  CHECK_THAT(*check_swap_flags(e, f, 1000), Catch::Contains("negative gap"));
}

TEST_CASE("simfuzz: the cases draw hw_override lists, odd signatures and limits that round to nothing") {
  int lists = 0, odd = 0, tiny = 0;
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    const FuzzCase c = generate_fuzz_case(seed);
    const YAML::Node o = c.experiment["hw_override"];
    for (const char* table : {"kernel_times", "conv_workspace"})
      if (o && o[table] && o[table].IsSequence() && o[table].size() > 0) {
        ++lists;
        for (size_t i = 0; i < o[table].size(); ++i)
          odd += o[table][i]["signature"].Scalar().find_first_of(",=\"") != std::string::npos;
      }
    const YAML::Node swap = c.experiment["swap"];
    if (swap.IsMap() && swap["limit_fraction"] && swap["limit_fraction"].as<double>() > 0 &&
        swap["limit_fraction"].as<double>() < 1e-6)
      ++tiny;
  }
  CHECK(lists >= 20);
  CHECK(odd >= 5);
  CHECK(tiny >= 10);
}
