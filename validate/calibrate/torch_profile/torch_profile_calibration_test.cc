#include "validate/calibrate/torch_profile/torch_profile_calibration.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/config_error.h"
#include "experiment/experiment.h"
#include "experiment/experiment_graph.h"
#include "hw/hardware.h"
#include "validate/calibrate/calibrate.h"
#include "validate/calibrate/torch_profile/host_profile_fit.h"

namespace dlsim {
namespace {

namespace fs = std::filesystem;
const std::string kCalTestData = std::string(DLSIM_SOURCE_DIR) + "/validate/calibrate/torch_profile/testdata/";
const std::string kCalHw = std::string(DLSIM_SOURCE_DIR) + "/configs/hw/";

fs::path cal_test_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("dlsim-torch-profile-" + name);
  fs::create_directories(d);
  return d;
}

std::string cal_read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

TorchProfileOptions cpu_fixtures(const std::string& hw, const fs::path& out) {
  return {{kCalTestData + "resnet18-b2-s32-cpu.trace.json", kCalTestData + "mlp-b8-cpu.trace.json"},
          {kCalTestData + "resnet18-b2-s32.yaml", kCalTestData + "mlp-b8.yaml"},
          kCalHw + hw,
          out.string()};
}

TEST_CASE("torch profile calibration: the CPU fixtures fit a host section of positive, plausible costs") {
  const fs::path dir = cal_test_dir("cpu");
  std::ostringstream report;
  REQUIRE(run_torch_profile_calibration(cpu_fixtures("h100-sxm-harness.yaml", dir / "a.yaml"), report) == 0);
  INFO(report.str());
  const Hardware hw = load_hardware((dir / "a.yaml").string());
  REQUIRE(hw.spec.eager_host);
  for (const std::string& k : eager_host_keys()) {
    const double us = eager_host_key_us(*hw.spec.eager_host, k);
    INFO(k << " = " << us << " us");
    CHECK(us > 0);
    // This CPU runs the ops' arithmetic inside them: a forward op of these small models takes microseconds to
    // tens of milliseconds (ResNet-18's convolutions), never a second.
    CHECK(us < 1e5);
  }
  // The per-op costs of a CPU's eager PyTorch: at least a microsecond per dispatched op.
  CHECK(eager_host_key_us(*hw.spec.eager_host, "forward_us.elementwise") > 1);
  CHECK(eager_host_key_us(*hw.spec.eager_host, "param_grad_us") > 1);
  // The base is the shipped file, named as such; the kernels stay its (no GPU kernel in a CPU trace).
  const std::string text = cal_read(dir / "a.yaml");
  CHECK_THAT(text, Catch::Contains("\nbase: h100-sxm-harness\n"));
  CHECK_THAT(text, !Catch::Contains("kernel_model:"));
  CHECK_THAT(report.str(), Catch::Contains("unmatched trace ops: 0 of"));
  CHECK_THAT(report.str(), Catch::Contains("kernels: none of the matched ops launched a GPU kernel"));
  CHECK_THAT(report.str(), Catch::Contains("stand-in: forward_us.view"));  // a view's backward: no graph op
}

TEST_CASE("torch profile calibration: the same traces give the same bytes") {
  const fs::path dir = cal_test_dir("twice");
  std::ostringstream r1, r2;
  run_torch_profile_calibration(cpu_fixtures("h100-sxm-pytorch.yaml", dir / "a.yaml"), r1);
  run_torch_profile_calibration(cpu_fixtures("h100-sxm-pytorch.yaml", dir / "b.yaml"), r2);
  CHECK(cal_read(dir / "a.yaml") == cal_read(dir / "b.yaml"));
  std::string a = r1.str(), b = r2.str();
  a.replace(a.find("a.yaml"), 6, "b.yaml");
  CHECK(a == b);  // the report too, but for the file it names
}

TEST_CASE("torch profile calibration: a file with the section keeps what the traces do not measure") {
  const fs::path dir = cal_test_dir("kept");
  std::ostringstream report;
  TorchProfileOptions o = cpu_fixtures("h100-sxm-pytorch.yaml", dir / "a.yaml");
  o.traces.pop_back();
  o.experiments.pop_back();  // ResNet-18 alone: no Linear-heavy model, but its classifier is a linear layer
  run_torch_profile_calibration(o, report);
  const Hardware base = load_hardware(kCalHw + "h100-sxm-pytorch.yaml");
  const Hardware fitted = load_hardware((dir / "a.yaml").string());
  CHECK(eager_host_key_us(*fitted.spec.eager_host, "backward_us.view") ==
        eager_host_key_us(*base.spec.eager_host, "backward_us.view"));
  CHECK_THAT(report.str(), Catch::Contains("kept from the --hw file"));
}

TEST_CASE("torch profile calibration: a --hw file of the user's own is the base by its path from the written file") {
  const fs::path dir = cal_test_dir("own-hw");
  fs::create_directories(dir / "mine");
  fs::create_directories(dir / "out");
  fs::copy_file(kCalHw + "h100-sxm-harness.yaml", dir / "mine" / "gpu.yaml", fs::copy_options::overwrite_existing);
  std::ostringstream report;
  TorchProfileOptions o = cpu_fixtures("h100-sxm-harness.yaml", dir / "out" / "fitted.yaml");
  o.hw = (dir / "mine" / "gpu.yaml").string();
  run_torch_profile_calibration(o, report);
  CHECK_THAT(cal_read(dir / "out" / "fitted.yaml"), Catch::Contains("\nbase: ../mine/gpu.yaml\n"));
  CHECK(load_hardware((dir / "out" / "fitted.yaml").string()).spec.eager_host.has_value());
}

TEST_CASE("torch profile calibration: a trace of another batch is refused and nothing is written") {
  const fs::path dir = cal_test_dir("refused");
  fs::remove(dir / "a.yaml");
  std::ostringstream report;
  TorchProfileOptions o = cpu_fixtures("h100-sxm-harness.yaml", dir / "a.yaml");
  o.experiments[0] = kCalTestData + "resnet18-b4-s32.yaml";
  CHECK_THROWS_WITH(run_torch_profile_calibration(o, report), Catch::Contains("match no op of resnet18 at batch 4"));
  CHECK_FALSE(fs::exists(dir / "a.yaml"));
  o.experiments.push_back(o.experiments.front());
  o.experiments.push_back(o.experiments.front());
  CHECK_THROWS_AS(run_torch_profile_calibration(o, report), ConfigError);  // 3 experiments for 2 traces
}

// The MLP's CPU trace with a GPU kernel under each forward aten::linear, timed `factor` times what `price` says
// for the graph's matching matrix product: a synthetic GPU trace (no GPU here) with a known answer.
fs::path synthetic_gpu_trace(const fs::path& dir, const std::function<double(const Graph&, const Op&)>& price_us) {
  nlohmann::json t = nlohmann::json::parse(cal_read(kCalTestData + "mlp-b8-cpu.trace.json"));
  const Graph g = build_experiment_graph(load_experiment(kCalTestData + "mlp-b8.yaml"));
  std::vector<const Op*> linears;
  for (const Op& op : g.ops())
    if (op.phase == Phase::Forward && op.kind == OpKind::MatMul) linears.push_back(&op);
  REQUIRE(linears.size() == 5);
  nlohmann::json added = nlohmann::json::array();
  int64_t correlation = 1000, k = 0;
  for (const nlohmann::json& e : t["traceEvents"]) {
    if (e.value("cat", "") != "cpu_op" || e.value("name", "") != "aten::linear") continue;
    const double ts = e["ts"].get<double>();
    added.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"ts", ts + 1},
                     {"dur", 1}, {"tid", e["tid"]}, {"pid", e["pid"]}, {"args", {{"correlation", correlation}}}});
    added.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "synthetic_gemm"}, {"ts", ts + 3},
                     {"dur", price_us(g, *linears[static_cast<size_t>(k++ % 5)])}, {"tid", 7}, {"pid", 0},
                     {"args", {{"correlation", correlation}, {"stream", 7}}}});
    ++correlation;
  }
  REQUIRE(k == 15);  // 5 linear layers x 3 steps
  for (nlohmann::json& e : added) t["traceEvents"].push_back(e);
  const fs::path p = dir / "mlp-synthetic-gpu.trace.json";
  std::ofstream(p) << t.dump();
  return p;
}

TEST_CASE("torch profile calibration: a synthetic GPU trace corrects the fitted kernel class by its factor") {
  // No GPU trace exists here: the kernels are written by the test, twice the fitted model's own prediction.
  const fs::path dir = cal_test_dir("gpu-fitted");
  const Hardware hw = load_hardware(kCalHw + "h200-fitted.yaml");
  const fs::path trace = synthetic_gpu_trace(dir, [&](const Graph& g, const Op& op) {
    return 2.0 * static_cast<double>(hw.kernels->cost(g, op).duration_ns) / 1e3;
  });
  std::ostringstream report;
  run_torch_profile_calibration({{trace.string()}, {kCalTestData + "mlp-b8.yaml"}, kCalHw + "h200-fitted.yaml",
                                 (dir / "a.yaml").string()},
                                report);
  INFO(report.str());
  const Hardware fitted = load_hardware((dir / "a.yaml").string());
  REQUIRE_FALSE(hw.spec.fitted_kernels.classes.empty());
  size_t corrected = 0;
  for (const auto& [name, c] : fitted.spec.fitted_kernels.classes) {
    const FittedKernelClass& b = hw.spec.fitted_kernels.classes.at(name);
    if (c == b) continue;
    ++corrected;
    CHECK(c.flop_scale == Approx(2 * b.flop_scale).epsilon(1e-4));
    CHECK(c.byte_scale == Approx(2 * b.byte_scale).epsilon(1e-4));
    CHECK(c.fixed_us == Approx(2 * b.fixed_us).epsilon(1e-4));
  }
  CHECK(corrected == 1);  // the fp32 GEMMs' class
  CHECK_THAT(report.str(), Catch::Contains("kernels: 15 from 15 matched host ops (of 15 in the traces"));
  CHECK_THAT(report.str(), Catch::Contains("scale 2.0000"));
}

TEST_CASE("torch profile calibration: a synthetic GPU trace on a roofline file fits the kind's op_class_scale") {
  const fs::path dir = cal_test_dir("gpu-roofline");
  const Hardware hw = load_hardware(kCalHw + "h100-sxm-harness.yaml");
  const RooflineCostModel plain = single_efficiency_roofline(hw.spec);
  const fs::path trace = synthetic_gpu_trace(dir, [&](const Graph& g, const Op& op) {
    return 3.0 * static_cast<double>(plain.cost(g, op).duration_ns) / 1e3;
  });
  std::ostringstream report;
  run_torch_profile_calibration({{trace.string()}, {kCalTestData + "mlp-b8.yaml"}, kCalHw + "h100-sxm-harness.yaml",
                                 (dir / "a.yaml").string()},
                                report);
  INFO(report.str());
  const Hardware fitted = load_hardware((dir / "a.yaml").string());
  REQUIRE(fitted.spec.op_class_scale.count(OpKind::MatMul));
  CHECK(fitted.spec.op_class_scale.at(OpKind::MatMul) == Approx(3.0).epsilon(1e-4));
  CHECK(fitted.spec.op_class_scale_path.count(OpKind::MatMul));
}

}  // namespace
}  // namespace dlsim
