// The executor's cost of concurrency: one simulated GoogLeNet training iteration (its inception blocks have
// four independent branches) on the H100 model, with the ops on 1 stream against 8, eagerly launched and as one
// CUDA Graph. With 8 streams the ops of each DAG level go round-robin over the streams (lower() adds the events
// between them), so the device model handles waves of several resident kernels and the events that order
// them. Counters: simulated iteration time and mean SM occupancy (what concurrency buys on the model), events
// per second (what it costs the simulator).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <map>

#include "hw/hardware.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/executor.h"
#include "program/lower.h"
#include "workloads/zoo.h"

namespace {

using namespace dlsim;

// Graph order; op i on stream (its index among the ops of its DAG level) % streams.
Schedule level_round_robin(const Graph& g, int streams) {
  Schedule s;
  s.num_streams = streams;
  std::vector<int> level(g.ops().size(), 0);
  std::map<TensorId, OpId> producer;
  std::map<int, int> seen_at_level;
  s.stream_of.assign(g.ops().size(), 0);
  for (const Op& op : g.ops()) {
    int l = 0;
    for (TensorId t : op.inputs)
      if (auto it = producer.find(t); it != producer.end()) l = std::max(l, level[static_cast<size_t>(it->second)] + 1);
    level[static_cast<size_t>(op.id)] = l;
    for (TensorId t : op.outputs) producer[t] = op.id;
    s.order.push_back(op.id);
    s.stream_of[static_cast<size_t>(op.id)] = seen_at_level[l]++ % streams;
  }
  return s;
}

void BM_SimulateGooglenetStreams(benchmark::State& state) {
  const int streams = static_cast<int>(state.range(0));
  const auto launch = state.range(1) == 0 ? LaunchMode::Eager : LaunchMode::CudaGraph;
  const int64_t batch = state.range(2);
  ModelOptions mo;
  mo.batch = batch;
  const Graph g = build_training_graph("googlenet", mo);
  const Hardware hw = load_hardware("h100-sxm");
  const Program p = lower(g, level_round_robin(g, streams), SwapPlan{});
  SimOptions opt;
  opt.iterations = 2;
  opt.record_trace = false;
  opt.launch = launch;
  uint64_t events = 0;
  RunResult last;
  for (auto _ : state) {
    VirtualDeviceMemory dev(hw.spec.memory_bytes, hw.spec.total_memory_bytes);
    PytorchCachingPool pool(dev, PytorchCachingOptions{});
    const SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, pool, dev};
    last = simulate(p, ctx, opt);
    events += last.events_processed;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["simulated_iteration_ms"] = static_cast<double>(last.steady_iteration_ns) / 1e6;
  state.counters["sm_occupancy"] = last.steady_sm_occupancy;
  state.SetLabel(std::string(to_string(launch)) + ", batch " + std::to_string(batch) + ", " +
                 std::to_string(streams) + (streams == 1 ? " stream" : " streams"));
}
BENCHMARK(BM_SimulateGooglenetStreams)
    ->ArgNames({"streams", "graph", "batch"})
    ->Args({1, 0, 32})
    ->Args({8, 0, 32})
    ->Args({1, 1, 32})
    ->Args({8, 1, 32})
    ->Args({1, 0, 1})
    ->Args({8, 0, 1})
    ->Args({1, 1, 1})
    ->Args({8, 1, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
