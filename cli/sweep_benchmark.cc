// Loading a large sweep: every point is expanded and checked before anything runs, so this is the time (and,
// through yaml-cpp's node memory, the space) a user waits before the first row. An 8,000-point sweep once
// took minutes and 4.7 GB here because each point's mapping shared the sweep document's memory pool.
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include <string>

#include "cli/sweep.h"

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

}  // namespace
