#include "common/yaml_reader.h"

#include <catch2/catch.hpp>

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
