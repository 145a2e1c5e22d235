// Data-driven scenarios: every tests/scenarios/<folder>/<name>.yaml is its own test case, named
// "scenario: <folder>/<name>" and tagged [scenario][<folder>] (as DuckDB registers each .test file), so that
// `ctest -R 'scenario: pools/'` or `ctest -R cnmem` picks scenarios out; a file named *.slow.yaml is hidden
// (tag [.]: run it by name). A scenario holds an experiment and what it must produce:
//   description: why the scenario exists
//   experiment: {...}            # an experiment mapping, as in configs/experiments
//   expect:                      # metrics: the keys of `dlsim run --json` (sim_wall_ms excluded), plus
//     <metric>: 123              #   `fragmentation`; a nested one as kernel_report.measured_ops.
//     <metric>: {min: 1, max: 2} #   exact for integers, booleans and strings; Approx for other numbers
// or, instead of `expect`, the error it must raise (at parse or at run time):
//   expect_error: {file: x.yaml, line: 4, key: pool, message: "...", contains: "..."}
//     every field optional; file is a file name (default: the scenario's own), message the whole text after
//     the place, contains a part of the full text.
// An error scenario may hold a sweep mapping (as in configs/sweeps) instead of an experiment: it must be refused
// when it is read, before anything runs. Or it names an input file, for what a scenario file cannot hold itself
// (an alias cycle or a nesting beyond the limit would make the scenario's own file unreadable):
//   input_file: {kind: experiment, path: ../../data/bad-input/alias-cycle.yaml}   # path from the scenario's folder
//     kind: experiment (read, then run), sweep, hardware, model-config (a config.json), fuzz-case (a simfuzz
//     replay), published-points (data/published), kernel-sweep (a kernels.json, `dlsim fit-kernels`) or
//     torch-profile (a torch.profiler trace, `dlsim calibrate --torch-profile`);
//     expect_error's file defaults to the input file's name.
// Each error is a ConfigError, which the dlsim binary prints and exits 2 for (docs/cli.md; tests/CMakeLists.txt
// checks that on the binary for each kind of input).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "experiment/simfuzz/simfuzz_case.h"
#include "experiment/sweep/sweep.h"
#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/hardware.h"
#include "validate/calibrate/kernel_fit/kernel_sweep.h"
#include "validate/calibrate/published_points.h"
#include "validate/calibrate/torch_profile/profile_steps.h"
#include "workloads/llama_models.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {

const fs::path kScenarios = fs::path(DLSIM_SOURCE_DIR) / "tests" / "scenarios";

// "kernel_report.measured_ops" -> /kernel_report/measured_ops.
const nlohmann::json* find_metric(const nlohmann::json& got, const std::string& key) {
  const nlohmann::json* at = &got;
  size_t from = 0;
  while (true) {
    const size_t dot = key.find('.', from);
    const std::string part = key.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &at->at(part);
    if (dot == std::string::npos) return at;
    from = dot + 1;
  }
}

void check_metric(const std::string& file, const std::string& key, const YAML::Node& want, const nlohmann::json& got) {
  INFO(file << ": metric '" << key << "'");
  const nlohmann::json* found = find_metric(got, key);
  REQUIRE(found != nullptr);
  const nlohmann::json& v = *found;
  if (want.IsMap()) {
    YamlMap range(want, file, "expect." + key);
    range.check_keys({"min", "max"});
    REQUIRE(v.is_number());
    const double x = v.get<double>();
    if (range.has("min")) CHECK(x >= range.get_double("min"));
    if (range.has("max")) CHECK(x <= range.get_double("max"));
  } else if (v.is_boolean()) {
    CHECK(v.get<bool>() == yaml_to_bool(want, file, key));
  } else if (v.is_number_integer() || v.is_number_unsigned()) {
    CHECK(v.get<int64_t>() == yaml_to_int(want, file, key));
  } else if (v.is_number()) {
    CHECK(v.get<double>() == Approx(yaml_to_double(want, file, key)).epsilon(1e-9));
  } else {
    CHECK(v.dump() == nlohmann::json(yaml_to_string(want, file, key)).dump());
  }
}

void expect_metrics(const YamlMap& doc, const std::string& file) {
  const Experiment e = experiment_from_yaml(doc.get("experiment"), file);
  const ExperimentResult r = run_experiment(e);
  nlohmann::json got = to_json(r, /*with_wall_time=*/false);
  got["fragmentation"] = r.fragmentation();
  const YamlMap expect = doc.get_map("expect");
  REQUIRE(expect.node().size() > 0);  // a scenario that expects nothing would test nothing
  for (auto it = expect.node().begin(); it != expect.node().end(); ++it)
    check_metric(file, it->first.Scalar(), it->second, got);
  CHECK(r.peak_reserved_bytes >= r.peak_live_bytes);  // an invariant of every run
}

// Reads (and for an experiment, runs) the input file `input` names with the loader of its kind.
void load_input_file(const YamlMap& input, const std::string& scenario) {
  input.check_keys({"kind", "path"});
  const std::string kind = input.get_string("kind");
  const std::string path = (fs::path(scenario).parent_path() / input.get_string("path")).string();
  REQUIRE(fs::is_regular_file(path));
  if (kind == "experiment") run_experiment(load_experiment(path));
  else if (kind == "sweep") load_sweep(path);
  else if (kind == "hardware") load_hardware(path);
  else if (kind == "model-config") load_llama_config(path);
  else if (kind == "fuzz-case") load_fuzz_case(path);
  else if (kind == "published-points") load_published_points(path);
  else if (kind == "kernel-sweep") load_kernel_sweep(path);
  else if (kind == "torch-profile") profile_steps(load_profiler_trace(path));
  else input.fail("kind", "unknown kind '" + kind + "'; valid: experiment, sweep, hardware, model-config, fuzz-case, "
                          "published-points, kernel-sweep, torch-profile");
}

void expect_error(const YamlMap& doc, const std::string& file) {
  const YamlMap want = doc.get_map("expect_error");
  want.check_keys({"file", "line", "key", "message", "contains"});
  REQUIRE(want.node().size() > 0);
  std::string source = file;  // the file the error must name, by default
  std::optional<ConfigError> got;
  try {
    if (doc.has("sweep")) {
      sweep_from_yaml(doc.get("sweep"), file);
    } else if (doc.has("input_file")) {
      const YamlMap input = doc.get_map("input_file");
      source = input.get_string("path");
      load_input_file(input, file);
    } else {
      run_experiment(experiment_from_yaml(doc.get("experiment"), file));
    }
  } catch (const ConfigError& e) {
    got = e;
  }
  INFO(file << ": expected an error");
  REQUIRE(got.has_value());
  INFO("got: " << got->what());
  CHECK(fs::path(got->file()).filename().string() == want.get_string("file", fs::path(source).filename().string()));
  if (want.has("line")) CHECK(got->line() == want.get_int("line"));
  if (want.has("key")) CHECK(got->key() == want.get_string("key"));
  if (want.has("message")) CHECK(got->message() == want.get_string("message"));
  if (want.has("contains")) CHECK_THAT(got->what(), Catch::Contains(want.get_string("contains")));
}

void run_scenario(const std::string& file) {
  const YamlMap doc(load_yaml_file(file), file);
  doc.check_keys({"description", "experiment", "sweep", "input_file", "expect", "expect_error"});
  REQUIRE(!doc.get_text("description", "").empty());
  REQUIRE(doc.has("experiment") + doc.has("sweep") + doc.has("input_file") == 1);
  REQUIRE(doc.has("expect") != doc.has("expect_error"));
  if (doc.has("expect_error")) {
    expect_error(doc, file);
  } else {
    REQUIRE(doc.has("experiment"));  // a sweep can only be expected to fail: running it would write results
    expect_metrics(doc, file);
  }
}

class ScenarioTest : public Catch::ITestInvoker {
 public:
  explicit ScenarioTest(std::string file) : file_(std::move(file)) {}
  void invoke() const override { run_scenario(file_); }

 private:
  std::string file_;
};

// Registers every scenario file as its own test case before Catch's main runs (the registry hub is a
// function-local static, so this is safe at static initialisation, as TEST_CASE's own registration is).
// tests/CMakeLists.txt makes a new or changed scenario file rebuild this binary, so ctest discovers it.
const bool kRegistered = [] {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(kScenarios))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const fs::path rel = fs::relative(f, kScenarios);
    std::string name = rel.string();
    name = name.substr(0, name.size() - std::string(".yaml").size());
    const bool slow = name.size() > 5 && name.ends_with(".slow");
    const std::string folder = rel.has_parent_path() ? rel.parent_path().string() : "scenarios";
    const std::string tags = "[scenario][" + folder + "]" + (slow ? "[.]" : "");
    Catch::AutoReg(new ScenarioTest(f.string()), Catch::SourceLineInfo(__FILE__, static_cast<std::size_t>(__LINE__)),
                   Catch::StringRef(), Catch::NameAndTags("scenario: " + name, tags));
  }
  return !files.empty();
}();

}  // namespace

TEST_CASE("the scenario folder holds scenarios", "[scenario]") { CHECK(kRegistered); }

TEST_CASE("the same experiment twice gives byte-identical JSON", "[scenario][determinism]") {
  Experiment e = load_experiment(std::string(DLSIM_SOURCE_DIR) + "/configs/experiments/resnet50-cnmem.yaml");
  e.iterations = 2;
  CHECK(to_json(run_experiment(e), false).dump() == to_json(run_experiment(e), false).dump());
}
