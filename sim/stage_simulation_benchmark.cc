// How long ios takes to schedule a training graph when the device model prices every candidate stage (the CLI's
// default, `stage_costs: simulator`), beside policies/concurrency/ios_schedule_benchmark.cc's fluid estimate.
// Issue 12's target: under a second for Inception-v3 and DenseNet-121. Also one stage alone.
#include <benchmark/benchmark.h>

#include "hw/hardware.h"
#include "policies/concurrency/schedules.h"
#include "sim/stage_simulation.h"
#include "workloads/zoo.h"

using namespace dlsim;

static void BM_IosScheduleSimulatedStages(benchmark::State& state, const std::string& model, int batch) {
  ModelOptions mo;
  mo.batch = batch;
  const Graph g = build_training_graph(model, mo);
  const Hardware hw = load_hardware("h100-sxm");
  const OpDag dag = op_dag(g);
  const OpCosts costs = op_costs(g, *hw.kernels);
  IosOptions o;
  o.launch_overhead_ns = hw.spec.launch_overhead_ns;
  o.stage_time = [&](const std::vector<std::vector<OpId>>& groups) {
    return simulate_stage(g, hw.spec, *hw.kernels, *hw.link, groups, hw.spec.launch_overhead_ns);
  };
  IosStats st;
  for (auto _ : state) {
    Schedule s = ios_schedule(g, dag, costs, o, &st);
    benchmark::DoNotOptimize(s.order.data());
  }
  state.counters["ops"] = static_cast<double>(g.ops().size());
  state.counters["parts"] = static_cast<double>(st.parts);
  state.counters["dp_states"] = static_cast<double>(st.states);
  state.counters["stage_estimates"] = static_cast<double>(st.stage_estimates);
  state.counters["work"] = static_cast<double>(st.work);
}
BENCHMARK_CAPTURE(BM_IosScheduleSimulatedStages, inception_v3_b32, std::string("inception_v3"), 32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IosScheduleSimulatedStages, densenet121_b32, std::string("densenet121"), 32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IosScheduleSimulatedStages, googlenet_b32, std::string("googlenet"), 32)->Unit(benchmark::kMillisecond);

// One stage on the device model: Inception-v3's first nine convolutions (batch 32) as three groups of three.
static void BM_SimulateStage(benchmark::State& state) {
  ModelOptions mo;
  mo.batch = 32;
  const Graph g = build_training_graph("inception_v3", mo);
  const Hardware hw = load_hardware("h100-sxm");
  std::vector<std::vector<OpId>> groups(3);
  int k = 0;
  for (const Op& op : g.ops())
    if (op.kind == OpKind::Conv2d && k < 9) groups[static_cast<size_t>(k++ % 3)].push_back(op.id);
  for (auto _ : state)
    benchmark::DoNotOptimize(simulate_stage(g, hw.spec, *hw.kernels, *hw.link, groups, hw.spec.launch_overhead_ns));
}
BENCHMARK(BM_SimulateStage)->Unit(benchmark::kMicrosecond);
