#include "hw/interconnect_file.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"

using namespace dlsim;

namespace {

// Line numbers are referred to below.
const std::string kTwoLevels =
    "interconnect:\n"              // 1
    "  base_latency_us: 10\n"      // 2
    "  intra_node:\n"              // 3
    "    link_gb_per_s: 450\n"     // 4
    "    latency_us: 2\n"          // 5
    "    bus_efficiency: 0.8\n"    // 6
    "  inter_node:\n"              // 7
    "    link_gb_per_s: 50\n"      // 8
    "    latency_us: 5\n"          // 9
    "    bus_efficiency: 0.8\n";   // 10

Interconnect parse(const std::string& text) {
  return interconnect_from_yaml(parse_yaml_text(text, "net.yaml"), "net.yaml");
}

std::string edited(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

// The ConfigError `text` raises, for checking where it points.
ConfigError error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e;
  }
  FAIL("no ConfigError for:\n" << text);
  return ConfigError("", 0, "", "");
}

}  // namespace

TEST_CASE("the interconnect section reads into rates in bytes/s and latencies in seconds") {
  const Interconnect n = parse(kTwoLevels);
  CHECK(n.base_latency_s == Approx(10e-6));
  CHECK(n.intra.bytes_per_s == Approx(450e9));
  CHECK(n.intra.latency_s == Approx(2e-6));
  CHECK(n.intra.bus_efficiency == Approx(0.8));
  REQUIRE(n.inter);
  CHECK(n.inter->effective() == Approx(40e9));
  CHECK(n.inter->latency_s == Approx(5e-6));
  // What it reads prices a collective: 16 ranks over 2 nodes, the ring's 76 µs (collective_model_test.cc).
  CHECK(collective_cost(n, CollectiveKind::AllReduce, 0, 16, 8, CollectiveAlgo::Ring).alpha_s == Approx(76e-6));
}

TEST_CASE("a single-node interconnect leaves inter_node out") {
  const std::string one_node = kTwoLevels.substr(0, kTwoLevels.find("  inter_node:"));
  const Interconnect n = parse(one_node);
  CHECK_FALSE(n.inter);
  CHECK_THROWS_AS(collective_cost(n, CollectiveKind::AllReduce, 1, 16, 8), std::invalid_argument);
}

TEST_CASE("a bad interconnect section is a ConfigError naming file, line and key") {
  struct Case {
    std::string from, to;
    int line;
    std::string key;
  };
  const Case cases[] = {
      {"    bus_efficiency: 0.8\n  inter", "    bus_efficiency: 1.2\n  inter", 6,
       "interconnect.intra_node.bus_efficiency"},
      {"    bus_efficiency: 0.8\n  inter", "    bus_efficiency: 0\n  inter", 6,
       "interconnect.intra_node.bus_efficiency"},
      {"link_gb_per_s: 50", "link_gb_per_s: 0", 8, "interconnect.inter_node.link_gb_per_s"},
      {"link_gb_per_s: 450", "link_gb_per_s: 4.5e6", 4, "interconnect.intra_node.link_gb_per_s"},
      {"latency_us: 5", "latency_us: -1", 9, "interconnect.inter_node.latency_us"},
      {"base_latency_us: 10", "base_latency_us: 2e6", 2, "interconnect.base_latency_us"},
      {"latency_us: 2", "latency_us: fast", 5, "interconnect.intra_node.latency_us"},
      {"latency_us: 2", "latncy_us: 2", 5, "interconnect.intra_node.latncy_us"},  // unknown key
      // a missing key: the line of its mapping (whose first key is on line 2 once line 2 is gone)
      {"  base_latency_us: 10\n", "", 2, "interconnect.base_latency_us"},
      {"  intra_node:\n    link_gb_per_s: 450\n    latency_us: 2\n    bus_efficiency: 0.8\n",
       "  intra_node: 450\n", 3, "interconnect.intra_node"},  // not a mapping
  };
  for (const Case& c : cases) {
    const std::string text = c.from.empty() ? kTwoLevels : edited(kTwoLevels, c.from, c.to);
    INFO(text);
    const ConfigError e = error_of(text);
    CHECK(e.file() == "net.yaml");
    CHECK(e.line() == c.line);
    CHECK(e.key() == c.key);
  }
}

TEST_CASE("a document holding more than the interconnect section is refused") {
  const ConfigError e = error_of(kTwoLevels + "gpu: h100\n");
  CHECK(e.file() == "net.yaml");
  CHECK(e.line() == 11);
  CHECK_THROWS_AS(parse("- 1\n- 2\n"), ConfigError);
  CHECK_THROWS_AS(parse(""), ConfigError);
}
