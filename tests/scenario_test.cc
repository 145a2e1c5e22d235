// Data-driven scenarios: each tests/scenarios/*.yaml holds an experiment and the metrics it must produce.
//   experiment: {...}          # an experiment mapping, as in configs/experiments
//   expect:
//     <metric>: 123            # exact (integers, booleans, strings)
//     <metric>: {min: 1, max: 2}
// Metrics are the keys of `dlsim run --json` (sim_wall_ms excluded), plus `fragmentation`.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "cli/experiment.h"
#include "cli/run_experiment.h"
#include "common/yaml_reader.h"

using namespace dlsim;

namespace {

std::vector<std::string> scenario_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(DLSIM_SOURCE_DIR) + "/tests/scenarios"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

void check_metric(const std::string& file, const std::string& key, const YAML::Node& want, const nlohmann::json& got) {
  INFO(file << ": metric '" << key << "'");
  REQUIRE(got.contains(key));
  const nlohmann::json& v = got.at(key);
  if (want.IsMap()) {
    REQUIRE(v.is_number());
    const double x = v.get<double>();
    if (want["min"]) CHECK(x >= yaml_to_double(want["min"], file, key + ".min"));
    if (want["max"]) CHECK(x <= yaml_to_double(want["max"], file, key + ".max"));
  } else if (v.is_boolean()) {
    CHECK(v.get<bool>() == yaml_to_bool(want, file, key));
  } else if (v.is_number_integer() || v.is_number_unsigned()) {
    CHECK(v.get<int64_t>() == yaml_to_int(want, file, key));
  } else if (v.is_number()) {
    CHECK(v.get<double>() == Approx(yaml_to_double(want, file, key)).epsilon(1e-9));
  } else {
    CHECK(v.dump() == nlohmann::json(want.as<std::string>()).dump());
  }
}

}  // namespace

TEST_CASE("scenario files produce their expected metrics", "[scenario]") {
  const auto files = scenario_files();
  REQUIRE(!files.empty());
  for (const auto& file : files) {
    SECTION(std::filesystem::path(file).filename().string()) {
      YamlMap doc(load_yaml_file(file), file);
      doc.check_keys({"description", "experiment", "expect"});
      Experiment e = experiment_from_yaml(doc.get("experiment"), file);
      ExperimentResult r = run_experiment(e);
      nlohmann::json got = to_json(r, /*with_wall_time=*/false);
      got["fragmentation"] = r.fragmentation();
      YamlMap expect = doc.get_map("expect");
      for (auto it = expect.node().begin(); it != expect.node().end(); ++it)
        check_metric(file, it->first.Scalar(), it->second, got);
      // Invariants every scenario must satisfy.
      CHECK(r.peak_reserved_bytes >= r.peak_live_bytes);
    }
  }
}

TEST_CASE("the same experiment twice gives byte-identical JSON", "[scenario][determinism]") {
  Experiment e = load_experiment(std::string(DLSIM_SOURCE_DIR) + "/configs/experiments/resnet50-cnmem.yaml");
  e.iterations = 2;
  CHECK(to_json(run_experiment(e), false).dump() == to_json(run_experiment(e), false).dump());
}
