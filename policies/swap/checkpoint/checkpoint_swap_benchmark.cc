// The checkpoint planner and the saved-bytes accounting on the deepest zoo models: both are linear passes over
// the ops and tensors, so they must take milliseconds (ResNet-152: 50 blocks, about 3,000 ops; GPT-2 at
// sequence 1024: 12 layers).
#include <benchmark/benchmark.h>

#include <string>

#include "policies/swap/checkpoint/checkpoint_swap.h"
#include "policies/swap/core/saved_bytes.h"
#include "workloads/zoo.h"

namespace {

struct Model {
  dlsim::Graph g;
  dlsim::Schedule schedule;
  explicit Model(const char* name) {
    dlsim::ModelOptions o;
    o.batch = 32;
    if (std::string(name) == "gpt2-small") o.batch = 4;
    g = dlsim::build_training_graph(name, o);
    for (const dlsim::Op& op : g.ops()) schedule.order.push_back(op.id);
    schedule.stream_of.assign(g.ops().size(), 0);
  }
};

// The planner: segments from the blocks, then the plan (the policies' plan() adds only the in-place check).
void BM_CheckpointPlan(benchmark::State& state, const char* name) {
  const Model m(name);
  dlsim::CheckpointOptions o;
  o.every = state.range(0);
  for (auto _ : state) {
    dlsim::SwapPlan p = dlsim::checkpoint_plan(m.g, m.schedule.order, dlsim::checkpoint_segments(m.g, o));
    benchmark::DoNotOptimize(p.recomputations.size());
  }
}
BENCHMARK_CAPTURE(BM_CheckpointPlan, resnet152, "resnet152")->Arg(1)->Arg(7)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CheckpointPlan, gpt2_small, "gpt2-small")->Arg(1)->Arg(3)->Unit(benchmark::kMillisecond);

void BM_SavedBytes(benchmark::State& state, const char* name) {
  const Model m(name);
  dlsim::CheckpointOptions o;
  o.every = 1;
  const dlsim::SwapPlan plan = dlsim::checkpoint_plan(m.g, m.schedule.order, dlsim::checkpoint_segments(m.g, o));
  for (auto _ : state) benchmark::DoNotOptimize(dlsim::saved_bytes(m.g, m.schedule.order, plan).backward_peak_saved_bytes);
}
BENCHMARK_CAPTURE(BM_SavedBytes, resnet152, "resnet152")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_SavedBytes, gpt2_small, "gpt2-small")->Unit(benchmark::kMillisecond);

}  // namespace
