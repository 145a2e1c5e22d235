// Building a training graph must take milliseconds even for the deepest zoo models (no quadratic passes).
#include <benchmark/benchmark.h>

#include "workloads/zoo.h"

namespace {

void BM_BuildTrainingGraph(benchmark::State& state, const char* model) {
  dlsim::ModelOptions o;
  o.batch = 32;
  for (auto _ : state) {
    dlsim::Graph g = dlsim::build_training_graph(model, o);
    benchmark::DoNotOptimize(g.ops().size());
  }
}
BENCHMARK_CAPTURE(BM_BuildTrainingGraph, resnet152, "resnet152")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BuildTrainingGraph, densenet121, "densenet121")->Unit(benchmark::kMillisecond);

void BM_Dag(benchmark::State& state) {
  dlsim::ModelOptions o;
  o.batch = 32;
  dlsim::Graph g = dlsim::build_training_graph("resnet152", o);
  for (auto _ : state) benchmark::DoNotOptimize(boost::num_edges(g.dag()));
}
BENCHMARK(BM_Dag)->Unit(benchmark::kMillisecond);

}  // namespace
