#include "validate/calibrate/published_calibration.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

using namespace dlsim;

// The shipped DeepLearningExamples points, fitted and simulated as `dlsim calibrate --published` does (without
// writing the hardware files): every point runs without running out of memory at the batch its table used, and
// the fit's error on a model it has not seen stays within the 20 % on each GPU.
TEST_CASE("calibrate --published fits the shipped points, and no point runs out of memory") {
  PublishedCalibrationOptions o;
  o.data = {std::string(DLSIM_SOURCE_DIR) + "/data/published/deeplearningexamples.yaml"};
  o.json = (std::filesystem::temp_directory_path() / "dlsim_published_test.json").string();
  std::ostringstream out;
  REQUIRE(run_published_calibration(o, out) == 0);
  std::ifstream in(o.json);
  const nlohmann::json j = nlohmann::json::parse(in);
  size_t points = 0;
  for (const auto& p : j["points"]) {
    INFO(p["id"].get<std::string>());
    CHECK_FALSE(p["oom"].get<bool>());
    CHECK(p.contains("left_out_ms"));
    CHECK(p["after_ms"].get<double>() > 0);
    ++points;
  }
  CHECK(points >= 40);
  for (const char* gpu : {"v100", "a100"}) {
    INFO(gpu);
    const auto& s = j["summary"][gpu];
    CHECK(s["mape_after"].get<double>() < s["mape_before"].get<double>());
    CHECK(s["mape_left_out"].get<double>() <= 20.0);
  }
  // The V100's fp32 points fit a CUDA-core efficiency, its AMP points an fp16 one; the A100 has no CUDA-core point.
  CHECK(j["fitted"]["v100"].contains("conv_cuda_core"));
  CHECK(j["fitted"]["v100"].contains("gemm_fp16"));
  CHECK(j["fitted"]["a100"].contains("conv_tf32"));
  CHECK_FALSE(j["fitted"]["a100"].contains("conv_cuda_core"));
}
