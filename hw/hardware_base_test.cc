#include "hw/hardware_base.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "common/config_error.h"
#include "common/yaml_reader.h"
#include "hw/gpu_spec_file.h"
#include "hw/hardware.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using testing::TempFile;

namespace {

ConfigError base_error(const std::string& path) {
  try {
    load_hardware(path);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError for " << path);
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("overlay: mappings merge key by key, other values replace, the variant's nodes keep their lines") {
  const YAML::Node base = parse_yaml_text("a: 1\nm:\n  x: 1\n  y: 2\nl: [1, 2]\n", "base.yaml");
  const YAML::Node over = parse_yaml_text("base: b\nm:\n  y: 20\n  z: 30\nl: [3]\nn: 4\n", "over.yaml");
  const YAML::Node out = overlay_hardware(base, over);
  CHECK(out["a"].as<int>() == 1);
  CHECK(out["m"]["x"].as<int>() == 1);
  CHECK(out["m"]["y"].as<int>() == 20);
  CHECK(out["m"]["z"].as<int>() == 30);
  CHECK(out["l"].size() == 1);
  CHECK(out["n"].as<int>() == 4);
  CHECK_FALSE(out["base"]);  // the variant's base is resolved, not kept
  const YamlMap m(out["m"], "over.yaml", "m");
  CHECK(m.line_of("y") == 3);  // the variant's key, on its own line
  CHECK(m.line_of("z") == 4);
  CHECK(YamlMap(out, "over.yaml").line_of("n") == 6);
  // Nothing was modified.
  CHECK(base["m"]["y"].as<int>() == 2);
  CHECK_FALSE(base["m"]["z"]);
  CHECK(over["base"].as<std::string>() == "b");
}

TEST_CASE("base: a variant of a shipped file is that file with the variant's keys") {
  TempFile f("variant.yaml", "base: h200-datasheet\ndescription: an H200 with another PCIe latency\npcie:\n  latency_us: 7\n");
  const GpuSpec v = load_hardware(f.path()).spec;
  const GpuSpec h200 = load_hardware("h200-datasheet").spec;
  CHECK(v.description == "an H200 with another PCIe latency");
  CHECK(v.pcie_latency_ns == 7000);
  CHECK(v.pcie_h2d_pinned == h200.pcie_h2d_pinned);  // the rest of pcie from the base
  CHECK(v.sms == h200.sms);
  CHECK(v.file == f.path());
  CHECK(v.name == std::filesystem::path(f.path()).stem().string());
  // An experiment's override lays over the variant as over any file.
  YAML::Node o = YAML::Load("{pcie: {latency_us: 9}}");
  CHECK(load_hardware(f.path(), o).spec.pcie_latency_ns == 9000);
}

TEST_CASE("base: a path is relative to the variant's folder, and chains, cycles and missing files") {
  const auto dir = std::filesystem::temp_directory_path() / ("dlsim_hw_base_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream((dir / name).string()) << text;
    return (dir / name).string();
  };
  SECTION("a chain of two") {
    write("one.yaml", "base: h100-sxm-datasheet\nlaunch_overhead_us: 3\n");
    const std::string two = write("two.yaml", "base: one.yaml\ncopy_engines: 4\n");
    const GpuSpec g = load_hardware(two).spec;
    CHECK(g.launch_overhead_ns == 3000);
    CHECK(g.copy_engines == 4);
    CHECK(g.sms == 132);
  }
  SECTION("a cycle") {
    write("p.yaml", "base: q.yaml\n");
    const std::string q = write("q.yaml", "sms: 3\nbase: p.yaml\n");
    const ConfigError e = base_error(q);
    CHECK(e.key() == "base");
    CHECK(e.line() == 1);
    CHECK_THAT(e.message(), Catch::Contains("a cycle of bases"));
  }
  SECTION("itself") {
    const std::string s = write("self.yaml", "base: self.yaml\n");
    CHECK_THAT(base_error(s).message(), Catch::Contains("names this file itself"));
  }
  SECTION("a missing file and an unknown name") {
    const std::string m = write("missing.yaml", "description: x\nbase: nowhere.yaml\n");
    const ConfigError e = base_error(m);
    CHECK(e.file() == m);
    CHECK(e.line() == 2);
    CHECK_THAT(e.message(), Catch::Contains("not found"));
    const ConfigError n = base_error(write("unknown.yaml", "base: h9000\n"));
    CHECK(n.key() == "base");
    CHECK_THAT(n.message(), Catch::Contains("unknown hardware 'h9000'"));
  }
  SECTION("an error in the base names the base") {
    const std::string broken = write("broken.yaml", "sms: 1\n");
    const std::string v = write("on-broken.yaml", "base: broken.yaml\n");
    CHECK(base_error(v).file() == broken);
  }
  SECTION("an error in the variant names the variant and its line") {
    const std::string v = write("bad-variant.yaml", "base: h200-datasheet\n\ncopy_engines: 0\n");
    const ConfigError e = base_error(v);
    CHECK(e.file() == v);
    CHECK(e.line() == 3);
    CHECK(e.key() == "copy_engines");
  }
  SECTION("base in an override or a mapping given in code is refused") {
    CHECK_THROWS_AS(load_hardware("h200-datasheet", YAML::Load("{base: h100-sxm}")), ConfigError);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the shipped files with PyTorch's eager host: their base and the host") {
  for (const auto& [base_name, name] : {std::pair<std::string, std::string>{"h100-sxm-fitted", "h100-sxm"},
                                        std::pair<std::string, std::string>{"h200-fitted", "h200"}}) {
    INFO(name);
    const GpuSpec base = load_hardware(base_name).spec;
    const GpuSpec v = load_hardware(name).spec;
    CHECK_FALSE(base.eager_host.has_value());
    REQUIRE(v.eager_host.has_value());
    CHECK(v.kernel_times == base.kernel_times);
    CHECK(v.fitted_kernels == base.fitted_kernels);
    CHECK(v.host_adam_bytes_per_s == base.host_adam_bytes_per_s);
    // launch_overhead_us is not compared: h100-sxm takes the harness's measured C++ launch (4.25 us) over its
    // base's datasheet assumption (5 us), as it takes the harness's PCIe and allocator figures.
    for (TimeNs c : v.eager_host->forward_ns) CHECK(c > 0);
  }
}
