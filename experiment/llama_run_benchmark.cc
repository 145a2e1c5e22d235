// Building and simulating one Llama-3-8B training iteration at sequence 8192 (mixed bf16, AdamW, FlashAttention):
// the target is under a second. The GPU's memory is raised by hw_override so that the whole iteration runs
// (on a real 80 GB H100 it is out of memory at the first steps of the backward pass, which would time less).
#include <benchmark/benchmark.h>
#include <yaml-cpp/yaml.h>

#include "experiment/experiment.h"
#include "experiment/run_experiment.h"
#include "workloads/zoo.h"

namespace {

constexpr const char* kLlama8k =
    "{model: llama3-8b, batch: 1, seq_len: 8192, hw: h100-sxm, hw_override: {memory: {total_mib: 4000000}},"
    " pool: pytorch-caching, swap: none, concurrency: serial, iterations: 1, precision: mixed-bf16, optimizer: adamw}";

void BM_BuildLlama3_8bTrainingGraph(benchmark::State& state) {
  dlsim::ModelOptions o;
  o.batch = 1;
  o.seq_len = 8192;
  o.training.precision = dlsim::Precision::MixedBF16;
  o.training.optimizer = dlsim::Optimizer::AdamW;
  for (auto _ : state) {
    dlsim::Graph g = dlsim::build_training_graph("llama3-8b", o);
    benchmark::DoNotOptimize(g.ops().size());
  }
}
BENCHMARK(BM_BuildLlama3_8bTrainingGraph)->Unit(benchmark::kMillisecond);

// Parse, build, plan and simulate: what `dlsim run` does for this experiment.
void BM_RunLlama3_8bIteration(benchmark::State& state) {
  const YAML::Node doc = YAML::Load(kLlama8k);
  bool oom = true;
  for (auto _ : state) {
    const dlsim::ExperimentResult r = dlsim::run_experiment(dlsim::experiment_from_yaml(doc, "llama.yaml"));
    oom = r.oom;
    benchmark::DoNotOptimize(r.peak_live_bytes);
  }
  if (oom) state.SkipWithError("the iteration ran out of simulated memory");
}
BENCHMARK(BM_RunLlama3_8bIteration)->Unit(benchmark::kMillisecond);

// The same on a real 80 GB H100 with ZeRO-Offload and checkpointing per layer (it fits there): the profile run
// without swapping, the plan, its lowering, the simulation of three iterations and the independent check.
constexpr const char* kLlama8kOffload =
    "{model: llama3-8b, batch: 1, seq_len: 8192, hw: h100-sxm, pool: pytorch-caching,"
    " swap: {name: zero-offload, checkpoint_every: 1}, concurrency: serial, iterations: 3, precision: mixed-bf16,"
    " optimizer: adamw}";

void BM_RunLlama3_8bZeroOffload(benchmark::State& state) {
  const YAML::Node doc = YAML::Load(kLlama8kOffload);
  bool oom = true;
  for (auto _ : state) {
    const dlsim::ExperimentResult r = dlsim::run_experiment(dlsim::experiment_from_yaml(doc, "llama-offload.yaml"));
    oom = r.oom;
    benchmark::DoNotOptimize(r.peak_live_bytes);
  }
  if (oom) state.SkipWithError("the iteration ran out of simulated memory");
}
BENCHMARK(BM_RunLlama3_8bZeroOffload)->Unit(benchmark::kMillisecond);

}  // namespace
