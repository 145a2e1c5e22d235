// The host engine with PyTorch's eager host model (hw/eager_host_model.h): each launch costs the host its op's
// charge, the once-per-step costs are paid once per iteration, and the run reports the host's and the device's
// busy time, so that a step of small ops is bound by the host and one of large ops by the device.
#include <catch2/catch.hpp>

#include "policies/pool/virtual_device_memory.h"
#include "policies/testing/fakes.h"
#include "sim/executor.h"

using namespace dlsim;
using namespace dlsim::testing;

namespace {

Command eager_launch(OpId op, int stream = 0) {
  return {CmdKind::Launch, static_cast<int16_t>(stream), op, kNoTensor, -1};
}

// Forward elementwise ops cost the host 5 us, backward ones 2 us, and the backward's start 7 us once per step.
GpuSpec eager_gpu() {
  GpuSpec s = fake_gpu();
  s.launch_overhead_ns = 100;  // what a launch costs without the model
  EagerHostSpec h;
  h.forward_ns[static_cast<size_t>(HostOpClass::Elementwise)] = 5000;
  h.backward_ns[static_cast<size_t>(HostOpClass::Elementwise)] = 2000;
  h.backward_start_ns = 7000;
  s.eager_host = h;
  s.concurrency.graph_launch_ns = 3000;
  s.concurrency.graph_node_ns = 100;
  return s;
}

RunResult run_eager_host(const Graph& g, const Program& p, const GpuSpec& spec, LaunchMode mode, int iterations = 1,
                         bool sync_every_iteration = false) {
  VirtualDeviceMemory dev(uint64_t{1} << 30);
  DirectPool pool(dev);
  AttrKernels kernels;
  LinearLink link(1.0, 1.0, 500);
  SimContext ctx{g, spec, kernels, link, pool, dev};
  SimOptions opt;
  opt.iterations = iterations;
  opt.launch = mode;
  opt.sync_every_iteration = sync_every_iteration;
  return simulate(p, ctx, opt);
}

}  // namespace

TEST_CASE("eager host model: small kernels wait for the host, the step is host-bound") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000), k1 = op(g, "k1", {}, {}, 1000), k2 = op(g, "k2", {}, {}, 1000);
  Program p;
  p.iteration = {eager_launch(k0), eager_launch(k1), eager_launch(k2)};
  const RunResult eager = run_eager_host(g, p, eager_gpu(), LaunchMode::Eager);
  // Each op joins its stream 5 us after the previous one: 5-6, 10-11, 15-16 us.
  CHECK(eager.iteration_ns == std::vector<TimeNs>{16000});
  CHECK(eager.steady_host_busy_ns == 15000);
  CHECK(eager.steady_device_busy_ns == 3000);
  REQUIRE(eager.trace.host_ops.size() == 3);
  CHECK(eager.trace.host_ops[1].op == k1);
  CHECK(eager.trace.host_ops[1].start == 5000);
  CHECK(eager.trace.host_ops[1].end == 10000);
  // Without the model each launch costs launch_overhead_ns: 0.1 us apart, the device decides.
  GpuSpec plain = eager_gpu();
  plain.eager_host.reset();
  const RunResult before = run_eager_host(g, p, plain, LaunchMode::Eager);
  CHECK(before.iteration_ns == std::vector<TimeNs>{3100});
  CHECK(before.steady_host_busy_ns == 300);
  // A CUDA-graph replay issues no ops: one graph launch, 0.1 us per node; never slower than eager.
  const RunResult graph = run_eager_host(g, p, eager_gpu(), LaunchMode::CudaGraph);
  CHECK(graph.iteration_ns == std::vector<TimeNs>{3000 + 100 + 3000});
  CHECK(graph.steady_host_busy_ns == 3000 + 300);
  CHECK(graph.iteration_ns.front() <= eager.iteration_ns.front());
}

TEST_CASE("eager host model: large kernels keep the device busy, the host runs ahead") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 10000), k1 = op(g, "k1", {}, {}, 10000), k2 = op(g, "k2", {}, {}, 10000);
  Program p;
  p.iteration = {eager_launch(k0), eager_launch(k1), eager_launch(k2)};
  const RunResult r = run_eager_host(g, p, eager_gpu(), LaunchMode::Eager);
  // k0 5-15 us, k1 queued at 10 us runs 15-25, k2 25-35.
  CHECK(r.iteration_ns == std::vector<TimeNs>{35000});
  CHECK(r.steady_host_busy_ns == 15000);
  CHECK(r.steady_device_busy_ns == 30000);
}

TEST_CASE("eager host model: the step's once costs are paid once per iteration, a relaunch pays the op again") {
  Graph g;
  const OpId f = op(g, "f", {}, {}, 1000);
  const OpId b = op(g, "b", {}, {}, 1000);
  g.op(b).phase = Phase::Backward;
  Program p;
  p.iteration = {eager_launch(f), eager_launch(b), eager_launch(b)};  // b again, as a recomputation would
  const RunResult r = run_eager_host(g, p, eager_gpu(), LaunchMode::Eager, 2);
  // f 5 us; b 2 + 7 us (the backward's start); b again 2 us: the host is busy 16 us per iteration.
  REQUIRE(r.host_busy_ns.size() == 2);
  CHECK(r.host_busy_ns[0] == 16000);
  CHECK(r.host_busy_ns[1] == 16000);
  CHECK(r.trace.host_ops[1].end - r.trace.host_ops[1].start == 9000);
  CHECK(r.trace.host_ops[2].end - r.trace.host_ops[2].start == 2000);
  CHECK(r.trace.host_ops[4].end - r.trace.host_ops[4].start == 9000);  // the second iteration pays it again
  CHECK(r.iteration_ns.front() == 17000);  // f 5-6, b 14-15, b 16-17
}

TEST_CASE("device busy time is the union of what runs on the streams") {
  Graph g;
  const OpId k0 = op(g, "k0", {}, {}, 1000, 100);
  const OpId k1 = op(g, "k1", {}, {}, 1000, 100);
  Program p;
  p.num_streams = 2;
  p.num_compute_streams = 2;
  p.iteration = {eager_launch(k0, 0), eager_launch(k1, 1)};
  const RunResult r = run_eager_host(g, p, eager_gpu(), LaunchMode::CudaGraph);
  // k0 3.1-4.1 us and k1 3.2-4.2 us side by side: busy 1.1 us of the 4.2 us iteration.
  CHECK(r.iteration_ns == std::vector<TimeNs>{4200});
  CHECK(r.steady_device_busy_ns == 1100);
}

TEST_CASE("busy times are charged to each iteration's own work, a CPU worker's step included") {
  // As ZeRO-Offload's delayed update: iteration i+1's kernel runs beside iteration i's CPU step, so the interval
  // between two iterations' ends holds no kernel of the later one; each iteration is still charged its own kernel.
  Graph g;
  const TensorId state = tensor(g, "state", 40000, true);  // 10,000 fp32 elements: a 40 us step at 1 byte per ns
  const OpId k = op(g, "k", {}, {}, 1000);
  const OpId h = op(g, "h", {}, {state});
  g.op(h).phase = Phase::Optimizer;
  Program p;
  p.num_streams = 2;
  p.num_compute_streams = 1;
  p.num_host_streams = 1;
  p.num_events = 1;
  p.setup = {{CmdKind::Alloc, 0, -1, state, -1}};
  p.iteration = {eager_launch(k), {CmdKind::RecordEvent, 0, -1, kNoTensor, 0}, {CmdKind::WaitEvent, 1, -1, kNoTensor, 0},
                 {CmdKind::HostCompute, 1, h, kNoTensor, -1}};
  p.teardown = {{CmdKind::Free, 0, -1, state, -1}};
  GpuSpec spec = fake_gpu();  // launches cost the host nothing
  const RunResult r = run_eager_host(g, p, spec, LaunchMode::Eager, 2);
  REQUIRE(r.iterations_completed == 2);
  CHECK(r.iteration_ns.back() == 40000);      // the CPU step is the bound
  CHECK(r.device_busy_ns == std::vector<TimeNs>{1000, 1000});
  CHECK(r.host_worker_busy_ns == std::vector<TimeNs>{40000, 40000});
  CHECK(r.steady_host_busy_ns == 0);
}

TEST_CASE("a step synchronised at its end does not overlap the next: the host's time plus the GPU's tail") {
  // A host-issued 5 us op, then a 20 us kernel: back to back, the host issues the next iteration's op while the
  // kernel runs, so the steady state is the kernel's 20 us; synchronised, each step is 5 us of host, then the
  // kernel from 5 to 25 us: 25 us, and the host waits 20 us of it.
  Graph g;
  const OpId k = op(g, "k", {}, {}, 20000);
  Program p;
  p.iteration = {eager_launch(k)};
  const RunResult overlapped = run_eager_host(g, p, eager_gpu(), LaunchMode::Eager, 3);
  const RunResult synced = run_eager_host(g, p, eager_gpu(), LaunchMode::Eager, 3, true);
  CHECK(overlapped.steady_iteration_ns == 20000);
  CHECK(synced.iteration_ns == std::vector<TimeNs>{25000, 25000, 25000});
  CHECK(synced.steady_host_busy_ns == 5000);
  CHECK(synced.steady_device_busy_ns == 20000);
  // A CUDA-graph replay synchronised the same way: the graph launch (3 us), then the kernel (and its node's 0.1 us).
  const RunResult graph = run_eager_host(g, p, eager_gpu(), LaunchMode::CudaGraph, 3, true);
  CHECK(graph.steady_iteration_ns >= 23000);
  CHECK(graph.steady_iteration_ns < run_eager_host(g, p, eager_gpu(), LaunchMode::Eager, 3, true).steady_iteration_ns);
}
