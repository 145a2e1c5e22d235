#include "hw/kernel_times_yaml.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>

#include "hw/testing/fixtures.h"
#include "hw/gpu_spec_file.h"

using namespace dlsim;

namespace {
std::string shipped(const std::string& name) {
  std::ifstream in(resolve_hw_path(name));
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("written kernel times read back exactly through load_gpu_spec") {
  std::map<std::string, TimeNs> times = {
      {"Conv2d in=f32[32,3,224,224];f32[64,3,7,7];- out=f32[32,64,112,112] attrs=kh=7,stride_h=2", 812345},
      {"Relu in=bf16[8] out=bf16[8] attrs=", 2100},
      {"Odd \"quoted\" \\ name: x", 7},
  };
  std::string yaml = kernel_times_yaml(times);
  CHECK(yaml.starts_with("kernel_times:\n  - {signature: \"Conv2d in=f32[32,3,224,224]"));
  testing::TempFile f("written.yaml", shipped("h100-sxm-datasheet") + yaml);
  CHECK(load_gpu_spec(f.path()).kernel_times == times);
}

TEST_CASE("an empty table is written as an empty list and reads back empty") {
  CHECK(kernel_times_yaml({}) == "kernel_times: []\n");
  testing::TempFile f("empty.yaml", shipped("v100-sxm2-16gb") + kernel_times_yaml({}));
  CHECK(load_gpu_spec(f.path()).kernel_times.empty());
}
