#include "hw/host_cpu_file.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"
#include "hw/hardware.h"
#include "hw/testing/fixtures.h"

using namespace dlsim;
using testing::TempFile;

namespace {

// A variant of the shipped H200 file with a complete pytorch_eager section; line numbers are referred to below.
const std::string kEager =
    "base: h200-datasheet\n"                        // 1
    "host_cpu:\n"                         // 2
    "  pytorch_eager:\n"                  // 3
    "    forward_us:\n"                   // 4
    "      conv: 40\n"                    // 5
    "      matmul: 60\n"                  // 6
    "      norm: 30\n"                    // 7
    "      elementwise: 10\n"             // 8
    "      view: 5\n"                     // 9
    "    backward_us:\n"                  // 10
    "      conv: 80\n"                    // 11
    "      matmul: 120\n"                 // 12
    "      norm: 35\n"                    // 13
    "      elementwise: 15\n"             // 14
    "      view: 4\n"                     // 15
    "    extra_kernel_us: 9\n"            // 16
    "    grad_accumulate_us: 9.5\n"       // 17
    "    param_grad_us: 1.25\n"           // 18
    "    backward_start_us: 700\n"        // 19
    "    optimizer_step_us: 150\n"        // 20
    "    optimizer_tensor_us: 4.5\n";     // 21

std::string host_cpu_edited(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

ConfigError host_error(const std::string& text) {
  TempFile f("eager_host.yaml", text);
  try {
    load_hardware(f.path());
  } catch (const ConfigError& e) {
    CHECK(e.file() == f.path());
    return e;
  }
  FAIL("no ConfigError for:\n" << text);
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("host_cpu.pytorch_eager: every cost read in ns, the base's adam rate kept") {
  TempFile f("eager_host.yaml", kEager);
  const GpuSpec g = load_hardware(f.path()).spec;
  REQUIRE(g.eager_host.has_value());
  const EagerHostSpec& s = *g.eager_host;
  CHECK(s.forward_ns == std::array<TimeNs, kHostOpClasses>{40000, 60000, 30000, 10000, 5000});
  CHECK(s.backward_ns == std::array<TimeNs, kHostOpClasses>{80000, 120000, 35000, 15000, 4000});
  CHECK(s.extra_kernel_ns == 9000);
  CHECK(s.grad_accumulate_ns == 9500);
  CHECK(s.param_grad_ns == 1250);
  CHECK(s.backward_start_ns == 700000);
  CHECK(s.optimizer_step_ns == 150000);
  CHECK(s.optimizer_tensor_ns == 4500);
  CHECK(g.host_adam_bytes_per_s == 17e9);  // from the base's host_cpu, merged key by key
  CHECK_FALSE(load_hardware("h200-datasheet").spec.eager_host.has_value());  // the shipped file: no eager model
}

TEST_CASE("host_cpu.pytorch_eager: mistakes name the variant's file, the line and the dotted key") {
  SECTION("a negative cost") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "norm: 30", "norm: -3"));
    CHECK(e.line() == 7);
    CHECK(e.key() == "host_cpu.pytorch_eager.forward_us.norm");
    CHECK_THAT(e.message(), Catch::Contains("must be in [0, 1e6] us, got -3"));
  }
  SECTION("a cost beyond a second") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "backward_start_us: 700", "backward_start_us: 2e6"));
    CHECK(e.line() == 19);
    CHECK(e.key() == "host_cpu.pytorch_eager.backward_start_us");
  }
  SECTION("a class left out") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "      view: 4\n", ""));
    CHECK(e.key() == "host_cpu.pytorch_eager.backward_us.view");
    CHECK(e.line() == 11);  // the mapping it is missing from starts with "conv" on line 11
  }
  SECTION("an unknown class") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "      view: 5\n", "      view: 5\n      attention: 3\n"));
    CHECK(e.line() == 10);
    CHECK(e.key() == "host_cpu.pytorch_eager.forward_us.attention");
    CHECK_THAT(e.message(), Catch::Contains("elementwise"));  // the valid keys are listed
  }
  SECTION("a cost that is not a number") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "param_grad_us: 1.25", "param_grad_us: fast"));
    CHECK(e.line() == 18);
    CHECK(e.key() == "host_cpu.pytorch_eager.param_grad_us");
  }
  SECTION("a missing per-step cost") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "    optimizer_step_us: 150\n", ""));
    CHECK(e.key() == "host_cpu.pytorch_eager.optimizer_step_us");
  }
  SECTION("an unknown key in host_cpu") {
    const ConfigError e = host_error(host_cpu_edited(kEager, "  pytorch_eager:", "  pytorch_eagre:"));
    CHECK(e.line() == 3);
    CHECK(e.key() == "host_cpu.pytorch_eagre");
  }
  SECTION("pytorch_eager that is not a mapping") {
    const ConfigError e = host_error("base: h200-datasheet\nhost_cpu:\n  pytorch_eager: 12\n");
    CHECK(e.line() == 3);
    CHECK(e.key() == "host_cpu.pytorch_eager");
  }
}

TEST_CASE("host_cpu: an empty section is refused, adam_gb_per_s keeps its range") {
  const GpuSpec base = load_hardware("h200-datasheet").spec;
  GpuSpec g = base;
  CHECK_THROWS_AS(read_host_cpu(YamlMap(YAML::Load("{}"), "x.yaml", "host_cpu"), g), ConfigError);
  try {
    read_host_cpu(YamlMap(YAML::Load("{adam_gb_per_s: 0}"), "x.yaml", "host_cpu"), g);
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "host_cpu.adam_gb_per_s");
    CHECK_THAT(e.message(), Catch::Contains("[0.001, 1e6] GB/s"));
  }
  read_host_cpu(YamlMap(YAML::Load("{adam_gb_per_s: 2.5}"), "x.yaml", "host_cpu"), g);
  CHECK(g.host_adam_bytes_per_s == 2.5e9);
  CHECK_FALSE(g.eager_host.has_value());
}
