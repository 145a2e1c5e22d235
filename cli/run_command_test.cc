#include "cli/run_command.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace dlsim;

TEST_CASE("dlsim run --json names the kernel model, and the table names it too") {
  RunCommandOptions o;
  // h100-sxm-harness is calibrated on a real H100 through dlsim's harness (its kernel_times cover ResNet-50 at
  // batch 32 exactly).
  const auto table = std::filesystem::temp_directory_path() / "dlsim-run-command-harness.yaml";
  {
    std::ofstream f(table);
    f << "model: resnet50\nbatch: 32\nhw: h100-sxm-harness\npool: cnmem\nswap: none\nconcurrency: serial\n";
  }
  o.experiment = table.string();
  o.json = true;
  std::ostringstream json, err;
  CHECK(run_run_command(o, json, err) == 0);
  const auto j = nlohmann::json::parse(json.str());
  CHECK(j["kernel_model"] == "table");
  CHECK(j["kernel_report"]["ops"] == 564);
  CHECK(j["kernel_report"]["measured_ops"] == 564);
  CHECK(j["kernel_report"]["unmeasured_signatures"] == 0);
  CHECK(j["oom"] == false);

  o.json = false;
  std::ostringstream text;
  CHECK(run_run_command(o, text, err) == 0);
  CHECK_THAT(text.str(),
             Catch::Contains("hardware          h100-sxm-harness, kernel model table (564 of 564 ops measured)\n"));
  CHECK_THAT(text.str(), Catch::Contains("peak live         2862.5 MiB  (lower bound for any pool)\n"));
  std::filesystem::remove(table);

  // The default h100-sxm: the kernel model fitted to PyTorch-level data, which prices every op of ResNet-50 by
  // class, the 161 SGD updates by the multi_tensor class fitted from the H100's traces (their foreach launches).
  o.experiment = std::string(DLSIM_SOURCE_DIR) + "/configs/experiments/resnet50-cnmem.yaml";
  std::ostringstream fitted;
  CHECK(run_run_command(o, fitted, err) == 0);
  CHECK_THAT(fitted.str(),
             Catch::Contains("hardware          h100-sxm, kernel model fitted (564 of 564 ops by a fitted class, 0 "
                             "measured)\n"));


  // The datasheet file has no table: the roofline, with nothing to report.
  const auto path = std::filesystem::temp_directory_path() / "dlsim-run-command-datasheet.yaml";
  {
    std::ofstream f(path);
    f << "model: resnet50\nbatch: 32\nhw: h100-sxm-datasheet\npool: cnmem\nswap: none\nconcurrency: serial\n";
  }
  o.experiment = path.string();
  o.json = true;
  std::ostringstream json2;
  CHECK(run_run_command(o, json2, err) == 0);
  const auto k = nlohmann::json::parse(json2.str());
  CHECK(k["kernel_model"] == "roofline");
  CHECK(k["kernel_report"].empty());
  std::filesystem::remove(path);
}

TEST_CASE("dlsim run --json reports the launch mode, the streams and the steady-state SM occupancy") {
  const auto path = std::filesystem::temp_directory_path() / "dlsim-run-command-launch.yaml";
  auto run = [&](const std::string& launch) {
    {
      std::ofstream f(path);
      f << "model: resnet50\nbatch: 1\nhw: h100-sxm-datasheet\npool: cnmem\nswap: none\nconcurrency: serial\n"
        << "launch: " << launch << "\n";
    }
    RunCommandOptions o;
    o.experiment = path.string();
    o.json = true;
    std::ostringstream json, err;
    CHECK(run_run_command(o, json, err) == 0);
    return nlohmann::json::parse(json.str());
  };
  const auto eager = run("eager");
  const auto graph = run("cuda-graph");
  std::filesystem::remove(path);
  CHECK(eager["launch"] == "eager");
  CHECK(graph["launch"] == "cuda-graph");
  CHECK(eager["streams"] == 1);
  // At batch 1 on the datasheet file (roofline kernels of 2 us and more) the host's launches (5 us each) outlast
  // most kernels: a graph replay is faster and keeps the GPU busier. (On the calibrated h100-sxm the batch-1
  // kernels, scaled from measured batch-32 times, average 4.4 us: the GPU, not the host, sets the pace there.)
  CHECK(graph["iteration_time_us"].get<double>() < eager["iteration_time_us"].get<double>());
  CHECK(eager["sm_occupancy"].get<double>() > 0);
  CHECK(graph["sm_occupancy"].get<double>() > eager["sm_occupancy"].get<double>());
  CHECK(graph["sm_occupancy"].get<double>() <= 1);
  CHECK(graph["peak_reserved_bytes"] == eager["peak_reserved_bytes"]);
}
