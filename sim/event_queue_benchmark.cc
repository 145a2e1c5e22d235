// Speed of the simulator core. The hold model (Vaucher & Duval) keeps the pending set at a fixed size: each
// step pops the earliest event and schedules one at that time plus a random increment (uniform in
// [1, 1e6] ns, from an inline xorshift so that the generator costs next to nothing). One step = one event.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <limits>

#include "hw/hardware.h"
#include "policies/pool/pytorch_caching_pool.h"
#include "policies/pool/virtual_device_memory.h"
#include "sim/event_queue.h"
#include "sim/executor.h"
#include "program/lower.h"
#include "workloads/zoo.h"

namespace {

using namespace dlsim;

struct XorShift {
  uint64_t x = 88172645463325252ull;
  uint64_t operator()() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  }
};

void BM_EventQueueHold(benchmark::State& state) {
  const auto pending = static_cast<size_t>(state.range(0));
  EventQueue q(pending + 1);
  XorShift rng;
  for (size_t i = 0; i < pending; ++i) q.push(static_cast<TimeNs>(rng() % 1000000), 0, static_cast<uint32_t>(i));
  for (auto _ : state) {
    const Event e = q.pop();
    q.push(e.time + 1 + static_cast<TimeNs>(rng() % 1000000), e.type, e.payload);
  }
  benchmark::DoNotOptimize(q.top());
  state.SetItemsProcessed(state.iterations());
  state.SetLabel("events/s = items_per_second; pending set " + std::to_string(pending));
}
BENCHMARK(BM_EventQueueHold)->Arg(16)->Arg(256)->Arg(4096)->Arg(65536)->Arg(1 << 20);

// One simulated ResNet-50 training iteration, batch 32, on the H100 model: one compute stream in graph
// order, the PyTorch caching allocator, no trace recording. Graph building and lowering are outside the loop.
void BM_SimulateResnet50Iteration(benchmark::State& state) {
  ModelOptions mo;
  mo.batch = 32;
  const Graph g = build_training_graph("resnet50", mo);
  const Hardware hw = load_hardware("h100-sxm");
  Schedule s;
  for (const Op& o : g.ops()) s.order.push_back(o.id);
  s.stream_of.assign(g.ops().size(), 0);
  const Program p = lower(g, s, SwapPlan{});
  SimOptions opt;
  opt.iterations = 1;
  opt.record_trace = false;
  uint64_t events = 0;
  TimeNs simulated = 0;
  for (auto _ : state) {
    VirtualDeviceMemory dev(hw.spec.memory_bytes, hw.spec.total_memory_bytes);
    PytorchCachingPool pool(dev, PytorchCachingOptions{});
    const SimContext ctx{g, hw.spec, *hw.kernels, *hw.link, pool, dev};
    const RunResult r = simulate(p, ctx, opt);
    events += r.events_processed;
    simulated = r.steady_iteration_ns;
  }
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["ops"] = static_cast<double>(g.ops().size());
  state.counters["simulated_iteration_ms"] = static_cast<double>(simulated) / 1e6;
}
BENCHMARK(BM_SimulateResnet50Iteration)->Unit(benchmark::kMillisecond);

}  // namespace
