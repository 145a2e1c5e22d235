#include "cli/fit_kernels_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "cli/run_command.h"
#include "common/config_error.h"
#include "hw/gpu_spec_file.h"
#include "validate/calibrate/kernel_fit/kernel_sweep.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {

const std::string kFixture = std::string(DLSIM_SOURCE_DIR) + "/tests/data/kernel-sweep-h200-subset.json";

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("dlsim fit-kernels writes the base file with a fitted kernel_model that runs, the same bytes every time") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-fit-kernels-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  FitKernelsCommandOptions o;
  o.sweeps = {kFixture};
  o.hw = "h200-datasheet";
  o.out = (dir / "h200-fitted.yaml").string();
  o.report = (dir / "fit.md").string();
  std::ostringstream out, err;
  REQUIRE(run_fit_kernels_command(o, out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("kernel classes to 338 samples"));
  const std::string text = read_file(o.out);
  const std::string base = read_file(std::string(DLSIM_SOURCE_DIR) + "/configs/hw/h200-datasheet.yaml");
  // The datasheet file kept as it was, but for its description, which names the sweep.
  const std::string description = "description: \"NVIDIA H200 SXM 141GB HBM3e, PCIe Gen5 x16 host link (datasheet "
                                  "figures and assumptions, uncalibrated); kernel "
                                  "times fitted to a PyTorch sweep on the NVIDIA H200 (" + kFixture + ")\"\n";
  REQUIRE(text.find(description) != std::string::npos);
  const size_t d = base.find("description:");
  const size_t after = base.find('\n', d) + 1;
  CHECK(text.substr(0, d) == base.substr(0, d));
  CHECK(text.substr(d + description.size(), base.size() - after - 1) == base.substr(after, base.size() - after - 1));
  const GpuSpec spec = load_gpu_spec(o.out);
  CHECK(spec.kernel_model == "fitted");
  CHECK(spec.fitted_kernels.classes.count("conv_fwd.tf32.spatial") == 1);
  // The fixture, as the shared kernels.json, has no meta.timing_mode: timed with CUDA events around each call.
  CHECK(spec.fitted_kernels.fixed_includes_dispatch);
  const std::string report = read_file(o.report);
  CHECK_THAT(report, Catch::Contains("| class | samples | spread | before | k-fold | k-fold near / above fixed (n near) | LOMO (n) | in-sample |"));
  CHECK_THAT(report, Catch::Contains("| conv_fwd.tf32.spatial |"));

  std::ostringstream again;
  o.report.clear();
  o.out = (dir / "again.yaml").string();
  REQUIRE(run_fit_kernels_command(o, again, err) == 0);
  // The same fit, byte for byte, but for the command line it names (--out, --report).
  std::string first = text, second = read_file(o.out);
  first = first.substr(0, first.find("# kernel_model: fitted by"));
  second = second.substr(0, second.find("# kernel_model: fitted by"));
  CHECK(first == second);
  CHECK(text.substr(text.find("kernel_model:\n")) == read_file(o.out).substr(read_file(o.out).find("kernel_model:\n")));

  // A run on the written file prices by the fitted classes and says so.
  const fs::path exp = dir / "exp.yaml";
  std::ofstream(exp) << "model: resnet18\nbatch: 8\nhw: " << (dir / "h200-fitted.yaml").string()
                     << "\npool: cnmem\nswap: none\nconcurrency: serial\n";
  RunCommandOptions r;
  r.experiment = exp.string();
  r.json = true;
  std::ostringstream json;
  REQUIRE(run_run_command(r, json, err) == 0);
  const auto j = nlohmann::json::parse(json.str());
  CHECK(j["kernel_model"] == "fitted");
  CHECK(j["kernel_report"]["fitted_ops"].get<int>() > 0);
  fs::remove_all(dir);
}

TEST_CASE("dlsim fit-kernels --shapes-of lists the zoo's kernels as sweep records") {
  const fs::path out = fs::temp_directory_path() / ("dlsim-shapes-" + std::to_string(::getpid()) + ".json");
  FitKernelsCommandOptions o;
  o.shapes_of = "resnet18,bert-base";
  o.batches = {2};
  o.out = out.string();
  std::ostringstream text, err;
  REQUIRE(run_fit_kernels_command(o, text, err) == 0);
  const auto j = nlohmann::json::parse(read_file(out));
  size_t convs = 0, gemms = 0;
  for (const auto& r : j["records"]) {
    convs += r["op"] == "conv_fwd";
    gemms += r["op"] == "gemm" || r["op"] == "bmm";
    CHECK((r["src"] == "model:resnet18" || r["src"] == "model:bert-base"));
  }
  CHECK(convs >= 10);  // resnet18's distinct convolutions
  CHECK(gemms >= 4);
  fs::remove(out);
}

TEST_CASE("dlsim fit-kernels refuses a sweep for a GPU the base file cannot run it on, and half a command line") {
  FitKernelsCommandOptions o;
  o.sweeps = {kFixture};
  o.hw = "v100-sxm2-16gb";  // no bf16 or TF32 tensor cores
  o.out = (fs::temp_directory_path() / "dlsim-never-written.yaml").string();
  std::ostringstream out, err;
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    CHECK(e.file() == kFixture);
    CHECK_THAT(e.message(), Catch::Contains("gives no peak_tflops"));
  }
  CHECK_FALSE(fs::exists(o.out));
  o.hw.clear();
  CHECK_THROWS_AS(run_fit_kernels_command(o, out, err), ConfigError);
}

TEST_CASE("dlsim fit-kernels reads whether the sweep's timings hold the host's dispatch from meta.timing_mode") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-fit-kernels-mode-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  nlohmann::json sweep = nlohmann::json::parse(read_file(kFixture));
  FitKernelsCommandOptions o;
  o.hw = "h200-datasheet";
  o.sweeps = {(dir / "sweep.json").string()};
  o.out = (dir / "out.yaml").string();
  std::ostringstream out, err;
  for (const auto& [mode, includes] : std::vector<std::pair<std::string, bool>>{
           {"graph", false}, {"trace", false}, {"events", true}}) {
    INFO(mode);
    sweep["meta"]["timing_mode"] = mode;
    std::ofstream(o.sweeps.front()) << sweep.dump();
    REQUIRE(run_fit_kernels_command(o, out, err) == 0);
    CHECK(load_gpu_spec(o.out).fitted_kernels.fixed_includes_dispatch == includes);
  }
  sweep["meta"]["timing_mode"] = "stopwatch";
  std::ofstream(o.sweeps.front()) << sweep.dump();
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("a timing mode nobody wrote was taken");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "meta.timing_mode");
    CHECK_THAT(e.what(), Catch::Contains("stopwatch"));
  }
  fs::remove_all(dir);
}

TEST_CASE("dlsim fit-kernels fits several sweeps of one GPU, each timed as its meta says, and writes each prediction") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-fit-kernels-two-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // The fixture (event-timed) and the same records graph-timed, 2 us faster: the dispatch the fit takes apart.
  nlohmann::json graph = nlohmann::json::parse(read_file(kFixture));
  graph["meta"]["timing_mode"] = "graph";
  graph["meta"]["timing"] = "a graph replay";
  for (auto& r : graph["records"]) {
    r["us"] = r["us"].get<double>() - 2.0;
    r.erase("us_min");
  }
  const std::string graph_file = (dir / "graph.json").string();
  std::ofstream(graph_file) << graph.dump();
  FitKernelsCommandOptions o;
  o.sweeps = {kFixture, graph_file};
  o.hw = "h200-datasheet";
  o.out = (dir / "out.yaml").string();
  o.predictions = (dir / "predictions.json").string();
  std::ostringstream out, err;
  REQUIRE(run_fit_kernels_command(o, out, err) == 0);
  CHECK_THAT(out.str(), Catch::Contains("kernel classes to 676 samples of " + kFixture + " and " + graph_file));
  const GpuSpec spec = load_gpu_spec(o.out);
  CHECK_FALSE(spec.fitted_kernels.fixed_includes_dispatch);  // a graph-timed sweep's fixed costs are the device's
  const std::string text = read_file(o.out);
  CHECK_THAT(text, Catch::Contains(graph_file + ": a graph replay"));

  const auto j = nlohmann::json::parse(read_file(o.predictions));
  REQUIRE(j["samples"].size() == 676);
  CHECK_FALSE(j["samples"][0]["device_timed"].get<bool>());
  CHECK(j["samples"][338]["device_timed"].get<bool>());
  // Its report would set device-time predictions against event-timed measurements: refused.
  o.report = (dir / "fit.md").string();
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("--report of mixed timings was taken");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "--report");
  }
  CHECK_FALSE(fs::exists(o.report));
  CHECK(j["base"] == "h200-datasheet");
  // Sample i of the second sweep is record i of its file: the same sizes, 2 us less (a backward's share aside).
  const auto& first = j["samples"][0];
  const auto& second = j["samples"][338];
  CHECK(first["op"] == second["op"]);
  CHECK(second["measured_us"].get<double>() == Approx(first["measured_us"].get<double>() - 2.0));
  for (const auto& s : j["samples"]) {
    CHECK(s["before_us"].get<double>() > 0);
    CHECK(s["kfold_us"].get<double>() > 0);
    CHECK(s["in_sample_us"].get<double>() > 0);
    CHECK(s.contains("lomo_us") == (s.contains("src") && s["src"].get<std::string>().rfind("model:", 0) == 0));
  }
  fs::remove_all(dir);
}

TEST_CASE("dlsim fit-kernels names the malformed one of several sweeps, and refuses sweeps of two GPUs") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim-fit-kernels-several-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string bad = std::string(DLSIM_SOURCE_DIR) + "/tests/data/bad-input/kernel-sweep-missing-time.json";
  FitKernelsCommandOptions o;
  o.sweeps = {kFixture, bad};  // the first loads; the second's record 1 has no time
  o.hw = "h200-datasheet";
  o.out = (dir / "out.yaml").string();
  std::ostringstream out, err;
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("a malformed second sweep was taken");
  } catch (const ConfigError& e) {
    CHECK(e.file() == bad);
    CHECK(e.key() == "records[1].us");
  }
  CHECK_FALSE(fs::exists(o.out));
  // The fixture's records again, as measured on another GPU: one GPU's kernel model is not fitted to both.
  nlohmann::json other = nlohmann::json::parse(read_file(kFixture));
  other["meta"]["device"] = "NVIDIA H100 80GB HBM3";
  const std::string other_file = (dir / "h100.json").string();
  std::ofstream(other_file) << other.dump();
  o.sweeps = {kFixture, other_file};
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("sweeps of two GPUs were fitted together");
  } catch (const ConfigError& e) {
    CHECK(e.file() == other_file);
    CHECK(e.key() == "meta.device");
    CHECK_THAT(e.message(), Catch::Contains("NVIDIA H200"));
  }
  CHECK_FALSE(fs::exists(o.out));
  fs::remove_all(dir);
}

TEST_CASE("dlsim fit-kernels --trace refuses traces without GPU kernels, experiments without traces, and --report") {
  const std::string data = std::string(DLSIM_SOURCE_DIR) + "/validate/calibrate/torch_profile/testdata/";
  FitKernelsCommandOptions o;
  o.sweeps = {kFixture};
  o.hw = "h200-datasheet";
  o.out = (fs::temp_directory_path() / ("dlsim-fit-kernels-trace-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ostringstream out, err;
  o.experiments = {data + "mlp-b8.yaml"};
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("--experiment without --trace was taken");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "--experiment");
  }
  o.traces = {data + "mlp-b8-cpu.trace.json"};  // a CPU trace: no kernel to fit
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("a trace without kernels was taken");
  } catch (const ConfigError& e) {
    CHECK(e.file() == data + "mlp-b8-cpu.trace.json");
    CHECK_THAT(e.message(), Catch::Contains("no GPU kernel"));
  }
  CHECK_FALSE(fs::exists(o.out));
  o.report = o.out + ".md";
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("--report with --trace was taken");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "--report");
  }
  o.report.clear();
  o.predictions = o.out + ".json";
  try {
    run_fit_kernels_command(o, out, err);
    FAIL("--predictions with --trace was taken");
  } catch (const ConfigError& e) {
    CHECK(e.key() == "--predictions");
  }
  o.predictions.clear();
  o.experiments = {data + "mlp-b8.yaml", data + "mlp-b8.yaml"};  // two experiments for one trace
  CHECK_THROWS_AS(run_fit_kernels_command(o, out, err), ConfigError);
}
