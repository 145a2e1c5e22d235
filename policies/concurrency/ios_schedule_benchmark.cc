// How long ios takes to schedule a training graph (issue 12's target: under a second for Inception-v3 and
// DenseNet-121), with the hardware file's kernel cost model. The final comparison with serial is not included:
// it runs the simulator twice (experiment/run_experiment.cc), which the sweep's timings show separately.
#include <benchmark/benchmark.h>

#include "hw/hardware.h"
#include "policies/concurrency/schedules.h"
#include "workloads/zoo.h"

using namespace dlsim;

static void BM_IosSchedule(benchmark::State& state, const std::string& model, int batch) {
  ModelOptions mo;
  mo.batch = batch;
  const Graph g = build_training_graph(model, mo);
  const Hardware hw = load_hardware("h100-sxm");
  const OpDag dag = op_dag(g);
  const OpCosts costs = op_costs(g, *hw.kernels);
  IosOptions o;
  o.launch_overhead_ns = hw.spec.launch_overhead_ns;
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
BENCHMARK_CAPTURE(BM_IosSchedule, inception_v3_b32, std::string("inception_v3"), 32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IosSchedule, densenet121_b32, std::string("densenet121"), 32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IosSchedule, googlenet_b32, std::string("googlenet"), 32)->Unit(benchmark::kMillisecond);

// The whole policy as the CLI runs it, from the graph (DAG and costs included), without the simulator check.
static void BM_IosPolicyFromGraph(benchmark::State& state, const std::string& model) {
  ModelOptions mo;
  mo.batch = 32;
  const Graph g = build_training_graph(model, mo);
  const Hardware hw = load_hardware("h100-sxm");
  for (auto _ : state) {
    const OpDag dag = op_dag(g);
    IosOptions o;
    Schedule s = ios_schedule(g, dag, op_costs(g, *hw.kernels), o);
    benchmark::DoNotOptimize(s.order.data());
  }
}
BENCHMARK_CAPTURE(BM_IosPolicyFromGraph, inception_v3, std::string("inception_v3"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_IosPolicyFromGraph, densenet121, std::string("densenet121"))->Unit(benchmark::kMillisecond);
