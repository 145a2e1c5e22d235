#include "validate/calibrate/concurrency_regression.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "common/config_error.h"
#include "hw/gpu_spec_file.h"

using namespace dlsim;

namespace {

const std::string kSource = DLSIM_SOURCE_DIR;

// The micro-benchmark's four cases with the given speed-ups (serial over parallel; single_ns as measured).
MicrobenchResults samples(double b1_two, double b1_three, double b32_two, double b32_three) {
  MicrobenchResults r;
  auto add = [&](int convs, const std::string& shape, double single, double speedup) {
    ConcurrencySample s;
    s.convs = convs;
    s.shape = shape;
    s.single_ns = single;
    s.parallel_ns = 100000;
    s.serial_ns = speedup * s.parallel_ns;
    r.concurrency.push_back(s);
  };
  add(2, "n1 c256 h14 w14 k256 r3 fp32", 22592, b1_two);
  add(3, "n1 c256 h14 w14 k256 r3 fp32", 22848, b1_three);
  add(2, "n32 c256 h14 w14 k256 r3 fp32", 45440, b32_two);
  add(3, "n32 c256 h14 w14 k256 r3 fp32", 44704, b32_three);
  return r;
}

}  // namespace

TEST_CASE("the concurrency fit recovers the constants that made the speed-ups") {
  const GpuSpec base = load_gpu_spec(kSource + "/configs/hw/h100-sxm-datasheet.yaml");
  GpuSpec truth = base;
  truth.concurrency.gemm_blocks_per_sm = 1;
  truth.concurrency.co_run_slowdown = 0.3;
  MicrobenchResults r = samples(1, 1, 1, 1);
  std::vector<double> made;
  for (ConcurrencySample& s : r.concurrency) {
    made.push_back(simulated_conv_speedup(truth, s, "x"));
    s.serial_ns = made.back() * s.parallel_ns;
  }
  // Small batch: 16 blocks each, all resident together, slowed only by co-running: 2 / 1.3 and 3 / 1.6.
  CHECK(made[0] == Approx(2 / 1.3).epsilon(1e-3));
  CHECK(made[1] == Approx(3 / 1.6).epsilon(1e-3));
  const ConcurrencyRegression f = regress_concurrency(r, base, "x");
  CHECK(f.gemm_blocks_per_sm == 1);
  CHECK(f.co_run_slowdown == Approx(0.3).margin(1e-3));
  CHECK(f.rms_log_error < 1e-3);
  REQUIRE(f.points.size() == 4);
  CHECK(f.points[2].blocks == 196);
}

TEST_CASE("the concurrency fit on the H100's measured concurrent convolutions") {
  const GpuSpec base = load_gpu_spec(kSource + "/configs/hw/h100-sxm-datasheet.yaml");
  const std::string file = kSource + "/results/validation/h100-sxm/micro.json";
  const ConcurrencyRegression f = regress_concurrency(read_microbench_file(file), base, file);
  REQUIRE(f.points.size() == 4);
  // Measured: 1.54x and 1.78x at batch 1, 1.17x and 1.19x at batch 32 (serial over parallel).
  CHECK(f.points[0].measured_speedup == Approx(1.54).margin(0.01));
  CHECK(f.points[3].measured_speedup == Approx(1.19).margin(0.01));
  // Two free constants for four speed-ups: the fit must rank them as measured (small kernels gain much more
  // from streams than ones that fill the GPU) and land within 6 % of each. (At this commit: one block per SM,
  // slowdown 0.312; simulated 1.52, 1.85, 1.12, 1.13 against 1.54, 1.78, 1.17, 1.19: rms log error 4 %.)
  CHECK(f.points[1].simulated_speedup > f.points[2].simulated_speedup);
  for (const auto& p : f.points) {
    INFO(p.convs << " x " << p.shape);
    CHECK(std::abs(std::log(p.simulated_speedup / p.measured_speedup)) < 0.06);
  }
  CHECK(f.co_run_slowdown > 0);
  CHECK(f.rms_log_error < 0.05);
}

TEST_CASE("the concurrency fit refuses a shape it cannot read, naming the file") {
  MicrobenchResults r = samples(1.5, 1.7, 1.1, 1.2);
  r.concurrency[1].shape = "n1 c256 h14 w14 k256";  // no filter size
  try {
    regress_concurrency(r, load_gpu_spec(kSource + "/configs/hw/h100-sxm-datasheet.yaml"), "m.json");
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK(e.file() == "m.json");
    CHECK(e.key() == "concurrency.shape");
    CHECK(std::string(e.what()).find("lacks r") != std::string::npos);
  }
  r.concurrency[1].shape = "n1 c2x56 h14 w14 k256 r3";
  CHECK_THROWS_AS(regress_concurrency(r, load_gpu_spec(kSource + "/configs/hw/h100-sxm-datasheet.yaml"), "m.json"),
                  ConfigError);
}

TEST_CASE("no concurrency samples: the input's constants stand") {
  GpuSpec base = load_gpu_spec(kSource + "/configs/hw/h100-sxm-datasheet.yaml");
  base.concurrency.co_run_slowdown = 0.7;
  const ConcurrencyRegression f = regress_concurrency(MicrobenchResults{}, base, "m.json");
  CHECK(f.points.empty());
  CHECK(f.co_run_slowdown == 0.7);
}
