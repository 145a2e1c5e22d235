// The key --resume and --merge match runs.csv rows to points by: exact over every field (hw_override lists and
// nested mappings in full), canonical in the order of mappings, and independent of the working folder.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "experiment/hw_override_label.h"
#include "experiment/sweep/runs_csv_row.h"
#include "experiment/sweep/sweep.h"
#include "hw/gpu_spec_file.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
Experiment key_experiment(const std::string& yaml, const std::string& file = "test.yaml") {
  return experiment_from_yaml(YAML::Load(yaml), file);
}
const std::string kBase = "{model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial";
}  // namespace

TEST_CASE("the hw_override label writes every value: lists, mappings in lists, and quoted text") {
  CHECK(hw_override_label(YAML::Load("{pcie: {h2d_pinned_gb_per_s: 25}}")) == "pcie.h2d_pinned_gb_per_s=25");
  CHECK(hw_override_label(YAML::Load("{b: 2, a: {y: [1, 2], x: 'p,q'}}")) == "a.x=\"p,q\",a.y=[1,2],b=2");
  CHECK(hw_override_label(YAML::Load("{t: [{s: 'x=\"1\"', ns: 5}, ~], e: {}}")) ==
        "e={},t=[{ns=5,s=\"x=\\\"1\\\"\"},~]");
  CHECK(hw_override_label(YAML::Load("{s: \"a\\nb\"}")) == "s=\"a\\u000ab\"");  // one line, whatever the text
  CHECK(hw_override_label(YAML::Node()).empty());
  // What used to be one label for different values: a list as "...", a value holding the separators.
  CHECK(hw_override_label(YAML::Load("{t: [1, 2]}")) != hw_override_label(YAML::Load("{t: [1, 3]}")));
  CHECK(hw_override_label(YAML::Load("{a: 'x,b=y'}")) != hw_override_label(YAML::Load("{a: x, b: y}")));
  // The order of mappings means nothing to the merge into the hardware file, so not to the label either.
  CHECK(hw_override_label(YAML::Load("{b: 1, a: {d: 2, c: 3}}")) == hw_override_label(YAML::Load("{a: {c: 3, d: 2}, b: 1}")));
}

TEST_CASE("two points that differ only in an hw_override list get different keys") {
  const Experiment a = key_experiment(kBase + ", hw_override: {kernel_times: [{signature: 'Relu in=f32[4]', ns: 5}]}}");
  const Experiment b = key_experiment(kBase + ", hw_override: {kernel_times: [{signature: 'Relu in=f32[4]', ns: 6}]}}");
  CHECK(runs_csv_key(a) != runs_csv_key(b));
  CHECK(a.hw_label() != b.hw_label());
  // The key an older dlsim wrote could not tell them apart, and says so.
  bool exact_a = true, exact_b = true;
  CHECK(runs_csv_legacy_key(a, exact_a) == runs_csv_legacy_key(b, exact_b));
  CHECK_FALSE(exact_a);
  // Without lists, and in file order, the legacy key is the key an older dlsim wrote (sorted or not).
  bool exact = false;
  const Experiment c = key_experiment(kBase + ", hw_override: {pcie: {latency_us: 3, h2d_pinned_gb_per_s: 20}}}");
  CHECK(runs_csv_legacy_key(c, exact).find("h100-sxm+pcie.latency_us=3,pcie.h2d_pinned_gb_per_s=20") != std::string::npos);
  CHECK(exact);
  CHECK(runs_csv_key(c).find("h100-sxm+pcie.h2d_pinned_gb_per_s=20,pcie.latency_us=3") != std::string::npos);
}

TEST_CASE("a hardware file in the key is named from the sweep file's folder, whatever the working folder") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim_key_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "study");
  fs::create_directories(dir / "elsewhere");
  fs::copy_file(resolve_hw_path("titan-x-pcie3"), dir / "study" / "my-gpu.yaml");
  std::ofstream(dir / "study" / "s.yaml")
      << "name: k\nbase: {model: cifar-resnet20, batch: 4, hw: my-gpu.yaml, pool: cnmem, swap: none, concurrency: serial}\n";
  const fs::path was = fs::current_path();
  fs::current_path(dir / "study");
  const std::string from_study = runs_csv_key(load_sweep("s.yaml").points[0].parsed);
  fs::current_path(dir / "elsewhere");
  const std::string from_elsewhere = runs_csv_key(load_sweep("../study/s.yaml").points[0].parsed);
  fs::current_path(dir);
  const std::string from_above = runs_csv_key(load_sweep((dir / "study" / "s.yaml").string()).points[0].parsed);
  fs::current_path(was);
  CHECK(from_study.find(",my-gpu.yaml,") != std::string::npos);
  CHECK(from_elsewhere == from_study);
  CHECK(from_above == from_study);
  fs::remove_all(dir);
}
