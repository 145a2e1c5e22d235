#include "validate/calibrate/published_points.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "common/config_error.h"

using namespace dlsim;

namespace {

const std::string kData = std::string(DLSIM_SOURCE_DIR) + "/data/published/";

std::string write(const std::string& name, const std::string& text) {
  // One file per process: CTest runs the cases as parallel processes.
  const auto p = std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

const char* kPoint = R"(source: {repo: NVIDIA/DeepLearningExamples, commit: 729963dd47e7c8bd462ad10bfac7a7b0b604e6dd}
points:
  - id: a
    path: README.md
    line: 5
    framework: pytorch
    gpu: a100
    hw: a100-sxm-80gb
    model: resnet50
    batch: 256
    precision: fp32
    tf32: all
    memory_format: nchw
    kernels: eager
    optimizer: sgd-momentum
    throughput: 1024
    use: fit
)";

}  // namespace

TEST_CASE("the shipped published data loads, each point with its source line") {
  const PublishedData d = load_published_points(kData + "deeplearningexamples.yaml");
  CHECK(d.repo == "NVIDIA/DeepLearningExamples");
  CHECK(d.commit.size() == 40);
  size_t fit = 0, excluded = 0;
  for (const PublishedPoint& p : d.points) {
    INFO(p.id);
    CHECK(p.line > 0);
    CHECK_FALSE(p.path.empty());
    fit += p.use == PointUse::Fit;
    if (p.use == PointUse::Excluded) {
      ++excluded;
      CHECK_FALSE(p.reason.empty());
    }
  }
  CHECK(fit >= 40);
  CHECK(excluded > 0);
  const PublishedData h = load_published_points(kData + "held-out.yaml");
  for (const PublishedPoint& p : h.points) CHECK(p.use == PointUse::Test);
}

TEST_CASE("a point's iteration time is its batch over its throughput") {
  const PublishedData d = load_published_points(write("dlsim_points_ok.yaml", kPoint));
  REQUIRE(d.points.size() == 1);
  CHECK(d.points[0].iteration_ms() == Approx(250.0));
  CHECK(d.points[0].training.tf32 == Tf32::All);
}

TEST_CASE("a bad point names the file, the line and the key") {
  auto error_of = [](const std::string& text) -> ConfigError {
    try {
      load_published_points(write("dlsim_points_bad.yaml", text));
    } catch (const ConfigError& e) {
      return e;
    }
    FAIL("no error");
    return ConfigError("", 0, "", "");
  };
  std::string t = kPoint;
  ConfigError e = error_of(std::string(t).replace(t.find("precision: fp32") + 11, 4, "fp64"));
  CHECK(e.key() == "points[0].precision");
  CHECK(e.line() == 11);
  CHECK_THAT(e.what(), Catch::Contains("valid: fp32, mixed-fp16, mixed-bf16, bf16"));
  e = error_of(std::string(t).replace(t.find("resnet50"), 8, "resnet51"));
  CHECK(e.key() == "points[0].model");
  e = error_of(std::string(t).replace(t.find("1024"), 4, "-3"));
  CHECK(e.key() == "points[0].throughput");
  e = error_of(std::string(t).replace(t.find("use: fit"), 8, "use: excluded"));
  CHECK(e.key() == "points[0].reason");
  e = error_of(std::string(t) + std::string(t.substr(t.find("  - id: a"))));
  CHECK(e.key() == "points[1].id");
}
