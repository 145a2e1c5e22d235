// Loading a large sweep: every point is expanded and checked before anything runs, so this is the time (and,
// through yaml-cpp's node memory, the space) a user waits before the first row. An 8,000-point sweep once
// took minutes and 4.7 GB here because each point's mapping shared the sweep document's memory pool.
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "experiment/experiment_graph.h"
#include "experiment/sweep/sweep.h"

namespace {

std::string sweep_text(int batches) {
  std::string s =
      "name: big\n"
      "base: {model: cifar-resnet20, batch: 8, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial}\n"
      "vary:\n  batch: [";
  for (int b = 1; b <= batches; ++b) s += (b > 1 ? ", " : "") + std::to_string(b);
  return s + "]\n  pool: [cnmem, cuda-malloc, pytorch-caching, smartpool]\n  iterations: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n";
}

void BM_LoadSweep(benchmark::State& state) {
  const YAML::Node doc = YAML::Load(sweep_text(static_cast<int>(state.range(0))));
  for (auto _ : state) {
    dlsim::Sweep s = dlsim::sweep_from_yaml(doc, "big.yaml");
    benchmark::DoNotOptimize(s.points.data());
  }
  state.counters["points"] = static_cast<double>(state.range(0) * 40);
}
BENCHMARK(BM_LoadSweep)->Arg(5)->Arg(50)->Arg(200)->Unit(benchmark::kMillisecond);

// Running a sweep on 1, 2 and 4 threads (`dlsim sweep --jobs`): 40 small points of many iterations each, on the
// simulator, rows written to a temporary results folder. The wall time should fall with the threads up to the
// number of free cores (scripts/sweep_speedup.sh measures the same on the 1,000-point sweep).
void BM_RunSweepJobs(benchmark::State& state) {
  const YAML::Node doc = YAML::Load(
      "name: jobs\n"
      "base: {model: cifar-resnet20, batch: 32, hw: h100-sxm, pool: cnmem, swap: none, concurrency: serial,"
      " iterations: 200}\n"
      "vary:\n  model: [cifar-alexnet, cifar-resnet20]\n  batch: [16, 64]\n"
      "  pool: [cuda-malloc, cnmem, pytorch-caching, {name: tf-bfc, allow_growth: true}, smartpool]\n"
      "  iterations: [100, 300]\n");
  const dlsim::Sweep s = dlsim::sweep_from_yaml(doc, "jobs.yaml");
  dlsim::SweepOptions opt;
  opt.results_dir = (std::filesystem::temp_directory_path() / "dlsim_sweep_benchmark").string();
  opt.quiet = true;
  opt.jobs = static_cast<int>(state.range(0));
  for (auto _ : state) {
    dlsim::GraphCache graphs;
    std::ostringstream log;
    const auto out = dlsim::run_sweep(
        s, opt, [&graphs](const dlsim::Experiment& e) { return dlsim::run_experiment(e, nullptr, &graphs, false); }, log);
    benchmark::DoNotOptimize(out.ran);
  }
  state.counters["points"] = static_cast<double>(s.points.size());
  state.counters["points/s"] =
      benchmark::Counter(static_cast<double>(s.points.size()), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_RunSweepJobs)->Arg(1)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
