// A sweep over data-parallel layouts: `parallel` is an axis like any experiment key, each layout and GPU count a
// row of its own (the hw column names it), and the shipped Llama-3-8B layouts sweep expands as its comments say.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "common/testing/test_files.h"
#include "experiment/sweep/sweep.h"

using namespace dlsim;
namespace fs = std::filesystem;

TEST_CASE("a sweep over dp, fsdp and zero on 1 and 4 GPUs writes one row each, the layout beside the hardware") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim_sweep_layouts_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "layouts.yaml";
  std::ofstream(file) << "name: layouts\nbase: {model: cifar-resnet20, batch: 4, hw: h100-sxm, pool: pytorch-caching,"
                         " swap: none, concurrency: serial, iterations: 2, optimizer: adamw}\n"
                         "vary:\n  parallel: [{dp: 1}, {dp: 4}, {fsdp: 4}, {zero: 1, dp: 4}, {zero: 2, dp: 4}]\n";
  const Sweep s = load_sweep(file.string());
  REQUIRE(s.points.size() == 5);
  SweepOptions o;
  o.results_dir = (dir / "results").string();
  o.quiet = true;
  std::ostringstream log;
  const SweepOutcome out = run_sweep(s, o, [](const Experiment& e) { return run_experiment(e, nullptr, nullptr, false); }, log);
  CHECK(out.errors == 0);
  std::istringstream csv(dlsim::testing::read_whole_file(dir / "results" / "layouts" / "runs.csv"));
  std::vector<std::string> rows;
  for (std::string line; std::getline(csv, line);) rows.push_back(line);
  REQUIRE(rows.size() == 6);
  // One GPU is the plain run and keeps the plain key; the others name their layout.
  CHECK(rows[1].rfind("cifar-resnet20,4,h100-sxm,", 0) == 0);
  CHECK(rows[2].rfind("cifar-resnet20,4,h100-sxm+dp=4,", 0) == 0);
  CHECK(rows[3].rfind("cifar-resnet20,4,h100-sxm+fsdp=4,", 0) == 0);
  CHECK(rows[4].rfind("cifar-resnet20,4,\"h100-sxm+zero1,dp=4\",", 0) == 0);
  CHECK(rows[5].rfind("cifar-resnet20,4,\"h100-sxm+zero2,dp=4\",", 0) == 0);
  for (size_t i = 1; i < rows.size(); ++i) CHECK(rows[i].find(",ok,") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("the shipped Llama-3-8B layouts sweep: 8 points of distinct keys, on 8 and 64 GPUs") {
  const Sweep s = load_sweep(std::string(DLSIM_SOURCE_DIR) + "/configs/sweeps/llama3-8b-layouts.yaml");
  REQUIRE(s.points.size() == 8);
  std::set<std::string> keys;
  for (const SweepPoint& p : s.points) keys.insert(runs_csv_key(p.parsed));
  CHECK(keys.size() == 8);
  CHECK(s.points[0].parsed.parallel.label() == "dp=8");
  CHECK(s.points[3].parsed.parallel.label() == "fsdp=64(param_dtype=bf16,reduce_dtype=fp32)");
  CHECK(s.points[7].parsed.parallel.label() == "fsdp=64(param_dtype=bf16,reduce_dtype=fp32)");
  CHECK(s.points[7].parsed.swap.name == "checkpoint");
  // Its runs (about 2 s here): under DDP the replicated fp32 weights and AdamW's two moments alone (12 B per
  // parameter, 96.4 GB) run out of an 80 GB H100 while being allocated, on any count, checkpointing or not; FSDP2
  // fits on 8 and 64, holding less on 64, and checkpointing (replays reading the regathered layer) holds less.
  const RunFn run = [](const Experiment& e) { return run_experiment(e, nullptr, nullptr, false); };
  std::vector<ExperimentResult> r;
  for (const SweepPoint& p : s.points) r.push_back(run(p.parsed));
  for (size_t i : {0, 1, 4, 5}) CHECK(r[i].oom);
  for (size_t i : {2, 3, 6, 7}) CHECK_FALSE(r[i].oom);
  CHECK(r[3].peak_live_bytes < r[2].peak_live_bytes);
  CHECK(r[7].peak_live_bytes < r[6].peak_live_bytes);
  CHECK(r[6].peak_live_bytes < r[2].peak_live_bytes);
  CHECK(r[7].peak_live_bytes < r[3].peak_live_bytes);
}
