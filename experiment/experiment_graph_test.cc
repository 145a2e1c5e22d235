#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "experiment/experiment_graph.h"
#include "experiment/run_experiment.h"
#include "experiment/sweep/sweep.h"
#include "common/testing/test_files.h"

using namespace dlsim;
namespace fs = std::filesystem;

namespace {
Experiment small(const std::string& model, int64_t batch, const std::string& pool) {
  const std::string text = "model: " + model + "\nbatch: " + std::to_string(batch) +
                           "\nhw: h100-sxm\npool: " + pool + "\nswap: none\nconcurrency: serial\niterations: 2\n";
  return experiment_from_yaml(YAML::Load(text), "");
}
}  // namespace

TEST_CASE("a graph is built once per model, batch and model options, whatever the pool") {
  GraphCache cache;
  const auto a = cache.get(small("cifar-resnet20", 8, "cnmem"));
  const auto b = cache.get(small("cifar-resnet20", 8, "cuda-malloc"));
  CHECK(a == b);
  CHECK(cache.builds() == 1);
  const auto c = cache.get(small("cifar-resnet20", 16, "cnmem"));
  CHECK(c != a);
  CHECK(c->batch == 16);
  Experiment adam = small("cifar-resnet20", 8, "cnmem");
  adam.optimizer = Optimizer::Adam;
  CHECK(cache.get(adam) != a);
  CHECK(cache.builds() == 3);
}

TEST_CASE("a graph that fails to build fails the same way for every caller, built once") {
  GraphCache cache;
  Experiment bad = small("cifar-resnet20", 8, "cnmem");
  bad.model = "no-such-model";
  CHECK_THROWS_WITH(cache.get(bad), Catch::Contains("no-such-model"));
  CHECK_THROWS_WITH(cache.get(bad), Catch::Contains("no-such-model"));
  CHECK(cache.builds() == 1);
}

TEST_CASE("threads asking for the same graph share one build") {
  GraphCache cache;
  const Experiment e = small("cifar-alexnet", 4, "cnmem");
  std::vector<std::shared_ptr<const Graph>> got(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) threads.emplace_back([&, t] { got[t] = cache.get(e); });
  for (auto& t : threads) t.join();
  CHECK(cache.builds() == 1);
  for (const auto& g : got) CHECK(g == got[0]);
}

TEST_CASE("a run from the cache gives the same result as one that builds its own graph") {
  GraphCache cache;
  for (const char* pool : {"cnmem", "cuda-malloc", "pytorch-caching"}) {
    const Experiment e = small("cifar-resnet20", 32, pool);
    const ExperimentResult own = run_experiment(e);
    const ExperimentResult cached = run_experiment(e, nullptr, &cache);
    CHECK(to_json(own, false) == to_json(cached, false));
  }
  CHECK(cache.builds() == 1);
}

TEST_CASE("a real sweep on two threads writes the same files as on one") {
  const fs::path dir = fs::temp_directory_path() / ("dlsim_graph_cache_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path file = dir / "real.yaml";
  std::ofstream(file) << "name: real\nbase: {model: cifar-resnet20, batch: 16, hw: h100-sxm, pool: cnmem, swap: none, "
                         "concurrency: serial, iterations: 2}\nvary:\n  model: [cifar-alexnet, cifar-resnet20]\n"
                         "  batch: [8, 16]\n  pool: [cuda-malloc, cnmem, smartpool]\n";
  const Sweep s = load_sweep(file.string());
  std::vector<std::string> csvs, summaries;
  for (int jobs : {1, 2}) {
    GraphCache cache;
    SweepOptions opt;
    opt.results_dir = (dir / ("jobs" + std::to_string(jobs))).string();
    opt.quiet = true;
    opt.jobs = jobs;
    std::ostringstream log;
    const SweepOutcome o =
        run_sweep(s, opt, [&cache](const Experiment& e) { return run_experiment(e, nullptr, &cache); }, log);
    CHECK(o.ran == 12);
    CHECK(o.errors == 0);
    CHECK(cache.builds() == 4);
    csvs.push_back(dlsim::testing::read_whole_file(fs::path(opt.results_dir) / "real" / "runs.csv"));
    summaries.push_back(dlsim::testing::read_whole_file(fs::path(opt.results_dir) / "real" / "summary.md"));
  }
  CHECK(csvs[0] == csvs[1]);
  CHECK(summaries[0] == summaries[1]);
}
