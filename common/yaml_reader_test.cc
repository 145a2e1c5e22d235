#include "common/yaml_reader.h"

#include <catch2/catch.hpp>

#include <string>

#include "common/config_error.h"

using namespace dlsim;

TEST_CASE("a key given twice in one mapping is an error naming both lines, at any depth") {
  const YAML::Node top = YAML::Load("model: resnet50\nbatch: 32\nbatch: 64\n");
  try {
    reject_duplicate_keys(top, "exp.yaml", "");
    FAIL("a repeated key was accepted");
  } catch (const ConfigError& e) {
    CHECK(e.line() == 3);
    CHECK(e.key() == "batch");
    CHECK(e.message() == "duplicate key (first given at line 2)");
  }
  const YAML::Node nested = YAML::Load("vary:\n  pool:\n    - {name: cnmem, init_size_mb: 1, init_size_mb: 2}\n");
  CHECK_THROWS_WITH(reject_duplicate_keys(nested, "s.yaml", ""), Catch::Contains("vary.pool.init_size_mb"));
  // The same key in two different mappings is no repeat.
  CHECK_NOTHROW(reject_duplicate_keys(YAML::Load("a: {x: 1}\nb: {x: 2}\n"), "f.yaml", ""));
}

TEST_CASE("a document whose aliases expand it past a million nodes is refused at once, a few aliases are fine") {
  // A fuzz finding (fuzz/hardware_yaml_fuzzer): nine levels of ten aliases each ("billion laughs", 511 bytes)
  // stand for 10^9 nodes; the duplicate-key walk then ran for minutes. Every YAML loader goes through this check.
  std::string laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 8; ++i) {
    laughs += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k) laughs += (k ? ", *a" : "*a") + std::to_string(i - 1);
    laughs += "]\n";
  }
  try {
    parse_yaml_text(laughs, "laughs.yaml");
    FAIL("the billion laughs were accepted");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "laughs.yaml");
    CHECK(e.message() == "the document stands for more than 1000000 nodes once its aliases (*name) are expanded: refused");
  }
  // Mappings too: the same nesting of aliased mappings (what hw_override merges) is refused.
  std::string maps = "m0: &m0 {a: x, b: x, c: x, d: x, e: x, f: x, g: x, h: x, i: x, j: x}\n";
  for (int i = 1; i <= 8; ++i) {
    maps += "m" + std::to_string(i) + ": &m" + std::to_string(i) + " {";
    for (int k = 0; k < 10; ++k) maps += std::string(k ? ", " : "") + char('a' + k) + ": *m" + std::to_string(i - 1);
    maps += "}\n";
  }
  CHECK_THROWS_AS(parse_yaml_text(maps, "maps.yaml"), ConfigError);
  // An alias used as YAML means it (one pool written once, named twice) still reads.
  const YAML::Node ok = parse_yaml_text("base: &b {model: resnet50, batch: 32}\nagain: *b\n", "ok.yaml");
  CHECK(ok["again"]["batch"].as<int>() == 32);
}
