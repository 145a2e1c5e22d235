#include "validate/calibrate/calibrated_block.h"

#include <catch2/catch.hpp>

#include "common/config_error.h"

using namespace dlsim;

namespace {

const char* kFile = R"(description: "x"
roofline:
  compute_efficiency: 0.6         # [A]
  memory_efficiency: 0.8

pcie:
  gen: 4
)";

}  // namespace

TEST_CASE("fitted values go between markers at the end of the roofline block, and a rewrite replaces them") {
  const std::string once = with_calibrated_block(kFile, {"fitted to 3 points.", "second line"},
                                             {{"occupancy_scaling", "false"}, {"conv_fwd_tf32_efficiency", "0.25"}}, "f");
  CHECK(once == R"(description: "x"
roofline:
  compute_efficiency: 0.6         # [A]
  memory_efficiency: 0.8
  # [F] begin: fitted to 3 points.
  #   second line
  occupancy_scaling: false
  conv_fwd_tf32_efficiency: 0.25
  # [F] end

pcie:
  gen: 4
)");
  // The same inputs give the same file; new values replace the old block; no values remove it.
  CHECK(with_calibrated_block(once, {"fitted to 3 points.", "second line"},
                          {{"occupancy_scaling", "false"}, {"conv_fwd_tf32_efficiency", "0.25"}}, "f") == once);
  const std::string twice = with_calibrated_block(once, {"refit"}, {{"gemm_fp16_efficiency", "0.4"}}, "f");
  CHECK(twice.find("conv_fwd_tf32_efficiency") == std::string::npos);
  CHECK(twice.find("  # [F] begin: refit\n  gemm_fp16_efficiency: 0.4\n  # [F] end\n") != std::string::npos);
  CHECK(with_calibrated_block(once, {}, {}, "f") == kFile);
}

TEST_CASE("a file without a roofline block, or with a block left open, is an error naming the file") {
  CHECK_THROWS_AS(with_calibrated_block("sms: 1\n", {}, {{"a", "1"}}, "nofile.yaml"), ConfigError);
  try {
    with_calibrated_block("roofline:\n  # [F] begin: x\n  a: 1\npcie:\n", {}, {{"a", "1"}}, "open.yaml");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "open.yaml");
    CHECK(e.line() == 2);
  }
}
